"""RegionFence: verdicts from the pod's annotation or the default regions, PreFilter Skip,
Filter without PreFilter, queueing hints and args validation."""

from __future__ import annotations

from typing import Any

import pytest
from asched.api import Node, Pod
from asched.framework import (
    ActionType,
    ArgsError,
    Code,
    CycleState,
    EventResource,
    QueueingHint,
)
from asched.testing import FakeHandle, Runner, enable, make_node, make_pod, node_info

from asched_policies.region_fence import ERR_REASON, NAME, SPEC, RegionFence, RegionFenceArgs

REGION = "topology.kubernetes.io/region"
ANNOTATION = "policies.asched.dev/regions"
PASS, REJECT, SKIP = "pass", "reject", "skip"


def plugin(args: dict[str, Any] | None = None) -> RegionFence:
    return RegionFence(RegionFenceArgs.from_dict(args or {}, "args"), FakeHandle())


def pod(regions: str | None = None) -> Pod:
    b = make_pod("p")
    if regions is not None:
        b.annotation(ANNOTATION, regions)
    return b.obj()


def node(region: str | None = None, key: str = REGION, name: str = "n1") -> Node:
    b = make_node(name)
    if region is not None:
        b.label(key, region)
    return b.obj()


def verdict(p: RegionFence, pd: Pod, n: Node) -> str:
    state = CycleState()
    _, st = p.pre_filter(state, pd, [])
    if st is not None:
        assert st.code == Code.SKIP
        return SKIP
    result = p.filter(state, pd, node_info(n))
    if result is None:
        return PASS
    assert result.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.reasons == (ERR_REASON,)
    assert result.plugin == NAME
    return REJECT


FILTER_CASES = [
    pytest.param(None, pod("cn-north,cn-east"), node("cn-east"), PASS, id="annotation-allows"),
    pytest.param(
        None, pod("cn-north,cn-east"), node("us-west"), REJECT, id="annotation-rejects-other-region"
    ),
    pytest.param(None, pod("cn-north"), node(None), REJECT, id="unlabelled-node-is-outside"),
    pytest.param(
        None,
        pod(" cn-north , cn-east ,"),
        node("cn-east"),
        PASS,
        id="blanks-and-trailing-comma-ignored",
    ),
    pytest.param(None, pod(), node("anywhere"), SKIP, id="no-fence-skips"),
    pytest.param(None, pod(" , "), node("anywhere"), SKIP, id="blank-annotation-is-no-fence"),
    pytest.param(
        {"defaultRegions": ["cn-north"]}, pod(), node("cn-north"), PASS, id="defaults-allow"
    ),
    pytest.param(
        {"defaultRegions": ["cn-north"]}, pod(), node("cn-east"), REJECT, id="defaults-reject"
    ),
    pytest.param(
        {"defaultRegions": ["cn-north"]},
        pod("cn-east"),
        node("cn-north"),
        REJECT,
        id="annotation-replaces-defaults",
    ),
    pytest.param(
        {"defaultRegions": ["cn-north"]},
        pod("cn-east"),
        node("cn-east"),
        PASS,
        id="annotation-may-leave-defaults",
    ),
    pytest.param(
        {"defaultRegions": ["cn-north"]},
        pod(""),
        node("cn-north"),
        PASS,
        id="empty-annotation-falls-back-to-defaults",
    ),
    pytest.param(
        {"labelKey": "example.com/region"},
        pod("eu"),
        node("eu", "example.com/region"),
        PASS,
        id="custom-label-key",
    ),
    pytest.param(
        {"labelKey": "example.com/region"},
        pod("eu"),
        node("eu"),
        REJECT,
        id="custom-label-key-ignores-standard-label",
    ),
]


@pytest.mark.parametrize(("args", "pd", "n", "want"), FILTER_CASES)
def test_filter(args: dict[str, Any] | None, pd: Pod, n: Node, want: str) -> None:
    assert verdict(plugin(args), pd, n) == want


@pytest.mark.parametrize(
    ("pd", "n", "rejected"),
    [
        pytest.param(pod("cn-north"), node("cn-north"), False, id="inside"),
        pytest.param(pod("cn-north"), node("cn-east"), True, id="outside"),
        pytest.param(pod(), node("cn-east"), False, id="unfenced"),
    ],
)
def test_filter_without_pre_filter(pd: Pod, n: Node, rejected: bool) -> None:
    """A profile may enable Filter alone; the verdict must not change."""
    status = plugin().filter(CycleState(), pd, node_info(n))
    assert (status is not None) == rejected


def test_registers_node_label_and_pod_update_events() -> None:
    events = {(e.event.resource, e.event.action) for e in plugin().events_to_register()}
    assert (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL) in events
    assert (EventResource.UNSCHEDULED_POD, ActionType.UPDATE) in events


def hint_for(
    resource: EventResource, pd: Pod, old: object | None, new: object | None
) -> QueueingHint:
    for registered in plugin().events_to_register():
        if registered.event.resource is resource:
            assert registered.hint is not None
            return registered.hint(pd, old, new)
    raise AssertionError(f"no {resource} event registered")


NODE_HINTS = [
    pytest.param(None, node("cn-north"), QueueingHint.QUEUE, id="added-inside"),
    pytest.param(None, node("us-west"), QueueingHint.QUEUE_SKIP, id="added-outside"),
    pytest.param(None, node(None), QueueingHint.QUEUE_SKIP, id="added-unlabelled"),
    pytest.param(node("us-west"), node("cn-north"), QueueingHint.QUEUE, id="moved-inside"),
    pytest.param(node(None), node("cn-north"), QueueingHint.QUEUE, id="labelled-inside"),
    pytest.param(
        node("cn-north"), node("cn-north"), QueueingHint.QUEUE_SKIP, id="was-inside-already"
    ),
    pytest.param(node("cn-north"), node("us-west"), QueueingHint.QUEUE_SKIP, id="moved-outside"),
]


@pytest.mark.parametrize(("old", "new", "want"), NODE_HINTS)
def test_node_change_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    assert hint_for(EventResource.NODE, pod("cn-north"), old, new) is want


POD_HINTS = [
    pytest.param(pod("cn-north"), pod("cn-north,cn-east"), QueueingHint.QUEUE, id="widened"),
    pytest.param(pod("cn-north"), pod(), QueueingHint.QUEUE, id="fence-removed"),
    pytest.param(
        pod("cn-north"), pod(" cn-north "), QueueingHint.QUEUE_SKIP, id="same-regions-respelled"
    ),
    pytest.param(
        pod("cn-north"),
        make_pod("p").annotation(ANNOTATION, "cn-north").label("x", "y").obj(),
        QueueingHint.QUEUE_SKIP,
        id="unrelated-change",
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), POD_HINTS)
def test_pod_update_hint(old: Pod, new: Pod, want: QueueingHint) -> None:
    assert hint_for(EventResource.UNSCHEDULED_POD, new, old, new) is want


ARGS_ERRORS = [
    pytest.param({"labelKey": "not a key"}, "args.labelKey", "Invalid value", id="bad-label-key"),
    pytest.param({"labelKey": ""}, "args.labelKey", "Invalid value", id="empty-label-key"),
    pytest.param(
        {"defaultRegions": "cn-north"},
        "args.defaultRegions",
        "must be a list",
        id="regions-not-a-list",
    ),
    pytest.param(
        {"defaultRegions": ["cn-north", 7]},
        "args.defaultRegions[1]",
        "must be a string",
        id="region-not-a-string",
    ),
    pytest.param(
        {"defaultRegions": ["cn-north", " "]},
        "args.defaultRegions[1]",
        "non-empty region name",
        id="blank-region",
    ),
    pytest.param(
        {"defaultRegions": ["cn-north,cn-east"]},
        "args.defaultRegions[0]",
        'without ","',
        id="comma-in-region",
    ),
    pytest.param({"regions": ["cn-north"]}, "args.regions", "unknown field", id="unknown-field"),
]


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_ERRORS)
def test_args_errors(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        RegionFenceArgs.from_dict(raw, "args")
    assert err.value.path == path
    assert message in err.value.message


def test_args_defaults_and_trimming() -> None:
    assert RegionFenceArgs.from_dict({}, "args") == RegionFenceArgs(REGION, frozenset())
    parsed = RegionFenceArgs.from_dict({"defaultRegions": [" a", "b "]}, "args")
    assert parsed.default_regions == frozenset({"a", "b"})


# --- through the framework --------------------------------------------------------


async def test_framework_rejects_nodes_outside_the_fence_with_the_reason() -> None:
    runner = Runner(
        [enable(SPEC, args={"defaultRegions": ["cn-north"]})],
        nodes=[node("cn-north", name="north"), node("cn-east", name="east"), node(name="bare")],
    )
    fenced = await runner.schedule(pod())
    assert fenced.feasible == ["north"]
    for name in ("east", "bare"):
        st = fenced.rejected[name]
        assert (st.code, st.reasons, st.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (ERR_REASON,),
            NAME,
        )
    assert fenced.selected == "north"
    widened = await runner.schedule(pod("cn-north,cn-east"))
    assert widened.feasible == ["north", "east"]


async def test_framework_skips_filter_for_unfenced_pods() -> None:
    result = await Runner([SPEC], nodes=[node("us-west")]).schedule(pod())
    assert result.skipped_filters == {NAME}
    assert result.feasible == ["n1"]
