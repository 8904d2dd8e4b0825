"""The Coscheduling adapter: args, registration, events, informers, the example config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from asched.api.podgroup import POD_GROUP_LABEL
from asched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from asched.framework.registry import ArgsError
from asched.plugins.coscheduling import PODGROUP_INFORMER, SPEC, CoschedulingArgs
from tests.builders import make_node, make_pod, make_pod_group
from tests.unit.plugins.coscheduling.fakes import GangHandle, plugin_for

EXAMPLE = Path(__file__).parents[4] / "manifests" / "examples" / "coscheduling-config.yaml"
PATH = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param({}, CoschedulingArgs(60, 0, 10), id="defaults"),
        pytest.param(
            {
                "permitWaitingTimeSeconds": 10,
                "podGroupBackoffSeconds": 5,
                "podGroupRejectPercentage": 0,
            },
            CoschedulingArgs(10, 5, 0),
            id="all-set",
        ),
        pytest.param(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "CoschedulingArgs",
                "podGroupRejectPercentage": 100,
            },
            CoschedulingArgs(60, 0, 100),
            id="type-meta-accepted",
        ),
    ],
)
def test_args(raw: dict[str, Any], want: CoschedulingArgs) -> None:
    assert CoschedulingArgs.from_dict(raw, PATH) == want


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        pytest.param(
            {"kubeConfigPath": "/x"},
            f"{PATH}.kubeConfigPath",
            "unknown field",
            id="removed-upstream-field",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": -1},
            f"{PATH}.permitWaitingTimeSeconds",
            "must be greater than 0",
            id="negative-timeout",
        ),
        pytest.param(
            {"podGroupBackoffSeconds": -1},
            f"{PATH}.podGroupBackoffSeconds",
            "must be greater than 0",
            id="negative-backoff",
        ),
        pytest.param(
            {"podGroupRejectPercentage": 101},
            f"{PATH}.podGroupRejectPercentage",
            "must be between 0 and 100",
            id="percentage-above-100",
        ),
        pytest.param(
            {"podGroupRejectPercentage": True},
            f"{PATH}.podGroupRejectPercentage",
            "expected an integer, got True",
            id="bool-is-not-an-integer",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": "10s"},
            f"{PATH}.permitWaitingTimeSeconds",
            "expected an integer, got '10s'",
            id="string",
        ),
        pytest.param(
            {"kind": "NodeResourcesFitArgs"},
            f"{PATH}.kind",
            "expected CoschedulingArgs, got 'NodeResourcesFitArgs'",
            id="wrong-kind",
        ),
    ],
)
def test_invalid_args_name_the_field(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        CoschedulingArgs.from_dict(raw, PATH)
    assert (err.value.path, err.value.message) == (path, message)


def test_spec_and_extension_points() -> None:
    assert SPEC.name == "Coscheduling"
    assert SPEC.parse_args(None, PATH) == CoschedulingArgs()
    assert SPEC.extension_points() == {
        "preEnqueue",
        "queueSort",
        "preFilter",
        "postFilter",
        "reserve",
        "permit",
        "postBind",
    }


def test_informer_request_for_podgroups() -> None:
    pl = plugin_for(GangHandle())
    assert list(pl.informers()) == [PODGROUP_INFORMER]
    assert PODGROUP_INFORMER.list_path == "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"
    assert PODGROUP_INFORMER.event_resource == EventResource.POD_GROUP
    assert PODGROUP_INFORMER.optional
    pg = PODGROUP_INFORMER.decode(make_pod_group("g").min_member(2).raw())
    assert (pg.key, pg.min_member) == ("default/g", 2)


@pytest.mark.parametrize(
    "incoming",
    [
        pytest.param(ClusterEvent(EventResource.POD, ActionType.ADD), id="pod-add"),
        pytest.param(ClusterEvent(EventResource.POD, ActionType.DELETE), id="pod-delete"),
        pytest.param(ClusterEvent(EventResource.NODE, ActionType.ADD), id="node-add"),
        pytest.param(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), id="podgroup-add"),
        pytest.param(
            ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE_OTHER), id="podgroup-update"
        ),
        pytest.param(
            ClusterEvent(EventResource.POD_GROUP, ActionType.DELETE), id="podgroup-delete"
        ),
    ],
)
def test_events_to_register(incoming: ClusterEvent) -> None:
    registered = plugin_for(GangHandle()).events_to_register()
    assert any(r.event.matches(incoming) for r in registered)


def test_events_to_register_ignore_node_label_changes() -> None:
    registered = plugin_for(GangHandle()).events_to_register()
    incoming = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
    assert not any(r.event.matches(incoming) for r in registered)


async def test_post_bind_reports_the_group_status_through_run() -> None:
    h = GangHandle([make_node("n1").obj()], [make_pod_group("g").min_member(1).obj()])
    pod = make_pod("g1").pod_group("g").node("n1").obj()
    h.add(pod)
    pl = plugin_for(h)
    async with anyio.create_task_group() as tg:
        tg.start_soon(pl.run)
        await anyio.wait_all_tasks_blocked()
        await pl.post_bind(None, pod, "n1")  # type: ignore[arg-type]
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    [(_, path, body, _)] = h.client.requests
    assert path.endswith("/podgroups/g/status")
    assert body["status"]["phase"] == "Scheduled"
    assert body["status"]["scheduled"] == 1


def test_example_config_loads() -> None:
    registry_module = pytest.importorskip("asched.plugins.registry")
    from asched.config import load_config

    registry = registry_module.in_tree_registry()
    if "Coscheduling" not in registry:
        registry.register(SPEC)
    [profile] = load_config(EXAMPLE, registry).profiles
    assert profile.enabled("queueSort") == ("Coscheduling",)
    for point in ("preEnqueue", "preFilter", "postFilter", "reserve", "permit", "postBind"):
        assert "Coscheduling" in profile.enabled(point)
    assert profile.plugin_args["Coscheduling"] == CoschedulingArgs(60, 10, 10)


def test_pods_without_a_group_pass_every_point() -> None:
    h = GangHandle()
    pl = plugin_for(h)
    pod = make_pod("solo").obj()
    assert pl.pre_enqueue(pod) is None
    assert pl.pre_filter(None, pod, []) == (None, None)  # type: ignore[arg-type]
    assert pl.permit(None, pod, "n1") == (None, 0.0)  # type: ignore[arg-type]
    pl.unreserve(None, pod, "n1")  # type: ignore[arg-type]
    assert h.events.recorded == []


def test_every_scope_covers_each_pod_its_hint_would_queue() -> None:
    # ClusterEventWithHint.scope's contract: the queue asks only the pods of the groups a
    # scope names, so a pod whose hint answers Queue must be in one of them (else it stays
    # stranded); pods outside are the saving (every binding used to ask every gated member).
    def member(name: str, group: str, namespace: str = "default") -> Any:
        builder = make_pod(name, namespace)
        return (builder.label(POD_GROUP_LABEL, group) if group else builder).obj()

    g, h = make_pod_group("g").min_member(2).obj(), make_pod_group("h").min_member(2).obj()
    other_ns = make_pod_group("g", namespace="other").min_member(1).obj()
    handle = GangHandle(groups=[g, h, other_ns])
    pods = [
        member("g1", "g"),
        member("g2", "g"),
        member("h1", "h"),
        member("solo", ""),
        member("o1", "g", "other"),
    ]
    handle.add(*pods)
    registered = [r for r in plugin_for(handle).events_to_register() if r.scope is not None]
    assert len(registered) == 2
    objects: list[object] = [*pods, g, h, other_ns]
    queued = 0
    for reg in registered:
        assert reg.hint is not None
        for obj in objects:
            scope = reg.scope(None, obj)  # type: ignore[misc]
            for pod in pods:
                if reg.hint(pod, None, obj) is QueueingHint.QUEUE:
                    queued += 1
                    group = f"{pod.namespace}/{pod.labels[POD_GROUP_LABEL]}"
                    assert scope is None or group in scope
    # The hints did answer Queue, so the check above was exercised.
    assert queued >= 4
