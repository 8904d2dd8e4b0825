"""GPUDriver: driver label vs the pod's minimum (annotation or args), non-GPU pods,
malformed annotations, queueing hints and args validation."""

from __future__ import annotations

from typing import Any

import pytest
from asched.api import Node, Pod
from asched.framework import ArgsError, Code, CycleState, EventResource, QueueingHint
from asched.testing import FakeHandle, Runner, enable, make_node, make_pod, node_info

from asched_policies.gpu_driver import ERR_REASON, NAME, SPEC, GPUDriver, GPUDriverArgs

DRIVER = "nvidia.com/cuda.driver.major"
ANNOTATION = "policies.asched.dev/min-gpu-driver"
PASS, REJECT, SKIP, BAD_POD = "pass", "reject", "skip", "bad-pod"


def plugin(args: dict[str, Any] | None = None) -> GPUDriver:
    return GPUDriver(GPUDriverArgs.from_dict(args or {}, "args"), FakeHandle())


def gpu_pod(minimum: str | None = None, gpus: str = "1", resource: str = "nvidia.com/gpu") -> Pod:
    b = make_pod("p").request(resource, gpus)
    if minimum is not None:
        b.annotation(ANNOTATION, minimum)
    return b.obj()


def cpu_pod(minimum: str | None = None) -> Pod:
    b = make_pod("p").cpu("1")
    if minimum is not None:
        b.annotation(ANNOTATION, minimum)
    return b.obj()


def node(driver: str | None = None, key: str = DRIVER) -> Node:
    b = make_node("n1").resource("nvidia.com/gpu", "8")
    if driver is not None:
        b.label(key, driver)
    return b.obj()


def verdict(p: GPUDriver, pd: Pod, n: Node) -> str:
    state = CycleState()
    _, st = p.pre_filter(state, pd, [])
    if st is not None:
        if st.code == Code.SKIP:
            return SKIP
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert ANNOTATION in st.message()
        return BAD_POD
    result = p.filter(state, pd, node_info(n))
    if result is None:
        return PASS
    assert (result.code, result.reasons, result.plugin) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (ERR_REASON,),
        NAME,
    )
    return REJECT


FILTER_CASES = [
    pytest.param(None, cpu_pod("535"), node(None), SKIP, id="no-gpu-request-passes-everywhere"),
    pytest.param(None, gpu_pod(gpus="0"), node(None), SKIP, id="zero-gpus-is-no-request"),
    pytest.param(None, gpu_pod(), node(None), SKIP, id="gpu-pod-without-minimum"),
    pytest.param(None, gpu_pod("535"), node("535"), PASS, id="equal-driver"),
    pytest.param(None, gpu_pod("535"), node("550"), PASS, id="newer-driver"),
    pytest.param(None, gpu_pod("535"), node("470"), REJECT, id="older-driver"),
    pytest.param(None, gpu_pod("535"), node(None), REJECT, id="node-without-label"),
    pytest.param(None, gpu_pod("535"), node("535.104"), REJECT, id="node-label-not-integer"),
    pytest.param(None, gpu_pod(" 535 "), node("535"), PASS, id="annotation-blanks-trimmed"),
    pytest.param(None, gpu_pod("v535"), node("550"), BAD_POD, id="malformed-annotation"),
    pytest.param(None, gpu_pod("-1"), node("550"), BAD_POD, id="negative-annotation"),
    pytest.param({"minMajor": 500}, gpu_pod(), node("510"), PASS, id="args-minimum-met"),
    pytest.param({"minMajor": 500}, gpu_pod(), node("490"), REJECT, id="args-minimum-not-met"),
    pytest.param(
        {"minMajor": 500}, gpu_pod("450"), node("470"), PASS, id="annotation-overrides-args"
    ),
    pytest.param(
        {"minMajor": 500}, gpu_pod("0"), node(None), SKIP, id="annotation-zero-lifts-minimum"
    ),
    pytest.param(
        {"labelKey": "example.com/driver"},
        gpu_pod("535"),
        node("540", "example.com/driver"),
        PASS,
        id="custom-label-key",
    ),
    pytest.param(
        {"resourceName": "amd.com/gpu"},
        gpu_pod("6"),
        node("5"),
        SKIP,
        id="other-gpu-resource-not-requested",
    ),
    pytest.param(
        {"resourceName": "amd.com/gpu"},
        gpu_pod("6", resource="amd.com/gpu"),
        node("5"),
        REJECT,
        id="custom-gpu-resource",
    ),
]


@pytest.mark.parametrize(("args", "pd", "n", "want"), FILTER_CASES)
def test_filter(args: dict[str, Any] | None, pd: Pod, n: Node, want: str) -> None:
    assert verdict(plugin(args), pd, n) == want


@pytest.mark.parametrize(
    ("pd", "n", "want_code"),
    [
        pytest.param(gpu_pod("535"), node("550"), None, id="satisfied"),
        pytest.param(gpu_pod("535"), node("470"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="old"),
        pytest.param(cpu_pod(), node(None), None, id="not-a-gpu-pod"),
        pytest.param(
            gpu_pod("x"), node("550"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="malformed"
        ),
    ],
)
def test_filter_without_pre_filter(pd: Pod, n: Node, want_code: Code | None) -> None:
    status = plugin().filter(CycleState(), pd, node_info(n))
    assert (status.code if status is not None else None) == want_code


def hint_for(
    resource: EventResource, pd: Pod, old: object | None, new: object | None
) -> QueueingHint:
    for registered in plugin().events_to_register():
        if registered.event.resource is resource:
            assert registered.hint is not None
            return registered.hint(pd, old, new)
    raise AssertionError(f"no {resource} event registered")


NODE_HINTS = [
    pytest.param(gpu_pod("535"), None, node("550"), QueueingHint.QUEUE, id="added-new-enough"),
    pytest.param(gpu_pod("535"), None, node("470"), QueueingHint.QUEUE_SKIP, id="added-too-old"),
    pytest.param(gpu_pod("535"), node("470"), node("550"), QueueingHint.QUEUE, id="upgraded"),
    pytest.param(gpu_pod("535"), node(None), node("550"), QueueingHint.QUEUE, id="labelled"),
    pytest.param(
        gpu_pod("535"), node("550"), node("560"), QueueingHint.QUEUE_SKIP, id="was-enough-already"
    ),
    pytest.param(
        gpu_pod("bad"), None, node("999"), QueueingHint.QUEUE_SKIP, id="malformed-pod-needs-pod-fix"
    ),
]


@pytest.mark.parametrize(("pd", "old", "new", "want"), NODE_HINTS)
def test_node_change_hint(pd: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    assert hint_for(EventResource.NODE, pd, old, new) is want


POD_HINTS = [
    pytest.param(gpu_pod("550"), gpu_pod("535"), QueueingHint.QUEUE, id="minimum-lowered"),
    pytest.param(gpu_pod("bad"), gpu_pod("535"), QueueingHint.QUEUE, id="annotation-fixed"),
    pytest.param(gpu_pod("535"), gpu_pod("535"), QueueingHint.QUEUE_SKIP, id="unchanged"),
    pytest.param(gpu_pod("bad"), gpu_pod("bad"), QueueingHint.QUEUE_SKIP, id="still-malformed"),
]


@pytest.mark.parametrize(("old", "new", "want"), POD_HINTS)
def test_pod_update_hint(old: Pod, new: Pod, want: QueueingHint) -> None:
    assert hint_for(EventResource.UNSCHEDULED_POD, new, old, new) is want


def test_args_defaults() -> None:
    assert GPUDriverArgs.from_dict({}, "args") == GPUDriverArgs(DRIVER, 0, "nvidia.com/gpu")


ARGS_ERRORS = [
    pytest.param({"minMajor": -1}, "args.minMajor", "must be >= 0", id="negative-minimum"),
    pytest.param({"minMajor": "535"}, "args.minMajor", "must be an integer", id="string-minimum"),
    pytest.param({"minMajor": True}, "args.minMajor", "must be an integer", id="bool-minimum"),
    pytest.param({"labelKey": "a/b/c"}, "args.labelKey", "Invalid value", id="bad-label-key"),
    pytest.param(
        {"resourceName": "cpu"}, "args.resourceName", "extended resource", id="native-resource"
    ),
    pytest.param({"driver": 1}, "args.driver", "unknown field", id="unknown-field"),
]


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_ERRORS)
def test_args_errors(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        GPUDriverArgs.from_dict(raw, "args")
    assert err.value.path == path
    assert message in err.value.message


# --- through the framework --------------------------------------------------------


async def test_framework_keeps_gpu_pods_off_old_drivers() -> None:
    old = make_node("old").resource("nvidia.com/gpu", "8").label(DRIVER, "470").obj()
    new = make_node("new").resource("nvidia.com/gpu", "8").label(DRIVER, "550").obj()
    runner = Runner([enable(SPEC, args={"minMajor": 500})], nodes=[old, new])
    result = await runner.schedule(gpu_pod())
    assert result.feasible == ["new"]
    assert result.rejected["old"].reasons == (ERR_REASON,)
    assert result.rejected["old"].plugin == NAME
    anywhere = await runner.schedule(cpu_pod())
    assert anywhere.feasible == ["old", "new"]
