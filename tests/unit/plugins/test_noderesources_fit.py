"""NodeResourcesFit: Filter reasons and codes, scoring strategies, queueing hints.

Cases follow kube-scheduler's fit_test.go, least/most_allocated_test.go and
requested_to_capacity_ratio_test.go; expected scores are worked out in comments.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from asched.api import Node, Pod
from asched.api.dra import decode_device_class, decode_resource_claim, decode_resource_slice
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.plugins.deviceclasses import DEVICE_CLASSES, resolver
from asched.plugins.dynamicresources.tracker import (
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    AllocatedState,
)
from asched.plugins.noderesources import FitArgs
from asched.plugins.noderesources.dra_totals import DraTotals
from asched.plugins.noderesources.fit import NAME, Fit, build_scorer
from asched.testing import dra
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

EXT = "example.com/aaa"


def small_node(pods: str = "32") -> Node:
    return (
        make_node("n1")
        .capacity(cpu="10m", memory="20", pods=pods)
        .resource("ephemeral-storage", "20")
        .resource(EXT, "5")
        .obj()
    )


def used(cpu: str = "0", memory: str = "0", extra: dict[str, str] | None = None) -> Pod:
    """A pod already bound to n1, holding these requests."""
    b = make_pod("existing").node("n1").cpu(cpu).memory(memory)
    for name, q in (extra or {}).items():
        b.request(name, q)
    return b.obj()


def run_filter(
    pod: Pod, existing: list[Pod], node: Node | None = None, args: dict[str, Any] | None = None
) -> Any:
    plugin = Fit(FitArgs.from_dict(args or {}, "args"), FakeHandle())
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None
    return plugin.filter(state, pod, node_info(node or small_node(), *existing))


FILTER_CASES = [
    pytest.param(make_pod("p").obj(), [used("10m", "20")], None, id="no-requests-always-fits"),
    pytest.param(
        make_pod("p").cpu("1m").memory("1").obj(),
        [used("10m", "20")],
        (Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
        id="too-many-resources",
    ),
    pytest.param(
        make_pod("p").cpu("1m").memory("1").init_container("i", {"cpu": "3m"}).obj(),
        [used("8m", "19")],
        (Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        id="init-container-over-limit",
    ),
    pytest.param(
        make_pod("p").cpu("1m").init_container("s", {"cpu": "2m"}, sidecar=True).obj(),
        [used("8m")],
        (Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        id="sidecar-adds-to-sum",
    ),
    pytest.param(make_pod("p").cpu("1m").memory("1").obj(), [used("5m", "5")], None, id="both-fit"),
    pytest.param(
        make_pod("p").cpu("2m").memory("1").obj(),
        [used("9m", "5")],
        (Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        id="only-cpu-short",
    ),
    pytest.param(
        make_pod("p").cpu("11m").obj(),
        [],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient cpu",)),
        id="larger-than-node-is-unresolvable",
    ),
    pytest.param(
        make_pod("p").cpu("11m").memory("1").obj(),
        [used("0", "20")],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient cpu", "Insufficient memory")),
        id="one-unresolvable-makes-all-unresolvable",
    ),
    pytest.param(
        make_pod("p").overhead({"cpu": "2m"}).cpu("1m").obj(),
        [used("8m")],
        (Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        id="overhead-counts",
    ),
    pytest.param(
        make_pod("p").request("ephemeral-storage", "11").obj(),
        [used(extra={"ephemeral-storage": "10"})],
        (Code.UNSCHEDULABLE, ("Insufficient ephemeral-storage",)),
        id="ephemeral-short",
    ),
    pytest.param(
        make_pod("p").request(EXT, "1").obj(), [used(extra={EXT: "4"})], None, id="extended-fits"
    ),
    pytest.param(
        make_pod("p").request(EXT, "3").obj(),
        [used(extra={EXT: "3"})],
        (Code.UNSCHEDULABLE, (f"Insufficient {EXT}",)),
        id="extended-short",
    ),
    pytest.param(
        make_pod("p").request("example.com/bbb", "1").obj(),
        [],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient example.com/bbb",)),
        id="extended-missing-on-node",
    ),
    pytest.param(
        make_pod("p").request("example.com/bbb", "0").obj(), [], None, id="zero-quantity-is-ignored"
    ),
    pytest.param(
        make_pod("p").request("hugepages-2Mi", "1").obj(),
        [],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient hugepages-2Mi",)),
        id="hugepages-short",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), FILTER_CASES)
def test_filter(pod: Pod, existing: list[Pod], want: tuple[Code, tuple[str, ...]] | None) -> None:
    st = run_filter(pod, existing)
    if want is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (*want, NAME)


@pytest.mark.parametrize(
    ("pods_capacity", "existing", "pod", "want"),
    [
        pytest.param("1", [used()], make_pod("p").obj(), ("Too many pods",), id="slots-full"),
        pytest.param(
            "1",
            [used("10m")],
            make_pod("p").cpu("1m").obj(),
            ("Too many pods", "Insufficient cpu"),
            id="slots-full-and-cpu",
        ),
        pytest.param("2", [used()], make_pod("p").obj(), None, id="one-slot-left"),
    ],
)
def test_filter_pod_slots(
    pods_capacity: str, existing: list[Pod], pod: Pod, want: tuple[str, ...] | None
) -> None:
    st = run_filter(pod, existing, small_node(pods_capacity))
    if want is None:
        assert st is None
    else:
        assert st is not None
        assert st.code == Code.UNSCHEDULABLE
        assert st.reasons == want


@pytest.mark.parametrize(
    ("args", "resource", "fits"),
    [
        pytest.param(
            {"ignoredResources": ["example.com/bbb"]},
            "example.com/bbb",
            True,
            id="ignored-resource",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com"]}, "example.com/bbb", True, id="ignored-group"
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.org"]},
            "example.com/bbb",
            False,
            id="other-group-still-checked",
        ),
        pytest.param(
            {"ignoredResources": ["hugepages-2Mi"]},
            "hugepages-2Mi",
            False,
            id="native-resources-are-never-ignored",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["kubernetes.io"]},
            "kubernetes.io/foo",
            False,
            id="kubernetes-io-prefix-is-native",
        ),
    ],
)
def test_ignored_resources_apply_to_extended_only(
    args: dict[str, Any], resource: str, fits: bool
) -> None:
    st = run_filter(make_pod("p").request(resource, "1").obj(), [], args=args)
    assert (st is None) == fits


def test_filter_without_prefilter_is_an_error() -> None:
    plugin = Fit(None, FakeHandle())
    st = plugin.filter(CycleState(), make_pod("p").obj(), node_info(small_node()))
    assert st is not None
    assert st.code == Code.ERROR


# --- Score -----------------------------------------------------------------------------


def cpu_mem_pod() -> Pod:
    # 3000m and 5000 bytes over two containers (kube-scheduler's cpuAndMemory).
    return (
        make_pod("p")
        .cpu("1000m")
        .memory("2000")
        .container("c2", requests={"cpu": "2000m", "memory": "3000"})
        .obj()
    )


def sized(name: str, cpu: str, memory: str, extra: dict[str, str] | None = None) -> Node:
    b = make_node(name).capacity(cpu=cpu, memory=memory)
    for res, q in (extra or {}).items():
        b.resource(res, q)
    return b.obj()


def scores(
    strategy: dict[str, Any] | None,
    pod: Pod,
    nodes: list[Node],
    existing: dict[str, list[Pod]] | None = None,
    pre_score: bool = True,
) -> list[int]:
    args = FitArgs.from_dict({"scoringStrategy": strategy} if strategy else {}, "args")
    infos = [node_info(n, *(existing or {}).get(n.name, [])) for n in nodes]
    plugin = Fit(args, FakeHandle(infos))
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, pod, infos) is None
    return [plugin.score(state, pod, ni) for ni in infos]


LEAST = {"type": "LeastAllocated"}
MOST = {"type": "MostAllocated"}


@pytest.mark.parametrize(
    ("strategy", "pod", "nodes", "existing", "want"),
    [
        # cpu (4000-3000)*100/4000=25, memory 50 -> 37; node2: cpu 50, memory 50 -> 50.
        pytest.param(
            None,
            cpu_mem_pod(),
            [sized("a", "4", "10000"), sized("b", "6", "10000")],
            None,
            [37, 50],
            id="least-default-differently-sized",
        ),
        # cpu 6000/10000 -> 40; memory: the cpu-only pod set memory to 0, so 5000 -> 75.
        pytest.param(
            LEAST,
            cpu_mem_pod(),
            [sized("a", "10", "20000")],
            {"a": [make_pod("e").node("a").cpu("3000m").memory("0").obj()]},
            [57],
            id="least-with-scheduled-pods",
        ),
        # cpu 25 x2 + memory 50 x1, over weight 3 -> 33.
        pytest.param(
            {**LEAST, "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
            cpu_mem_pod(),
            [sized("a", "4", "10000")],
            None,
            [33],
            id="least-weighted",
        ),
        # Nothing requested: 100m and 200Mi count; cpu 97, memory (1000-200)/1000 -> 80.
        pytest.param(
            LEAST,
            make_pod("p").obj(),
            [sized("a", "4", "1000Mi")],
            None,
            [88],
            id="least-best-effort-counts-defaults",
        ),
        # The pod does not request the GPU: the resource is left out of the average.
        pytest.param(
            {
                **LEAST,
                "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}],
            },
            cpu_mem_pod(),
            [sized("a", "4", "10000", extra={"example.com/gpu": "4"})],
            None,
            [37],
            id="least-unrequested-extended-skipped",
        ),
        # GPU 1 of 4 -> 75; (25 + 50 + 75) / 3 = 50.
        pytest.param(
            {
                **LEAST,
                "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}],
            },
            make_pod("p")
            .cpu("1000m")
            .memory("2000")
            .request("example.com/gpu", "1")
            .container("c2", requests={"cpu": "2000m", "memory": "3000"})
            .obj(),
            [sized("a", "4", "10000", extra={"example.com/gpu": "4"})],
            None,
            [50],
            id="least-requested-extended-counts",
        ),
        # cpu 75, memory 50 -> 62; node2 50/50 -> 50.
        pytest.param(
            MOST,
            cpu_mem_pod(),
            [sized("a", "4", "10000"), sized("b", "6", "10000")],
            None,
            [62, 50],
            id="most-allocated",
        ),
        # Requests beyond capacity are capped at 100.
        pytest.param(
            MOST,
            cpu_mem_pod(),
            [sized("a", "2", "4000")],
            None,
            [100],
            id="most-allocated-over-capacity",
        ),
        # Shape 0->10, 100->0 (x10): cpu 75% -> 25, memory 50% -> 50; 37.5 rounds to 38.
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            },
            cpu_mem_pod(),
            [sized("a", "4", "10000")],
            None,
            [38],
            id="rtcr-spread",
        ),
        # Bin packing: cpu 75, memory 50 -> 62.5 rounds half away from zero to 63.
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
            cpu_mem_pod(),
            [sized("a", "4", "10000")],
            None,
            [63],
            id="rtcr-binpack-rounding",
        ),
        # Memory at 0% scores 0 and leaves the weight sum: cpu 50% alone -> 50, not 25.
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
            make_pod("p").cpu("2000m").memory("0").obj(),
            [sized("a", "4", "10000")],
            None,
            [50],
            id="rtcr-zero-resource-score-not-weighted",
        ),
        # Three points: 40% sits on the 0..50 segment: 10 + (0-10)*40/50 = 2 (x10 = 20).
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu"}],
                "requestedToCapacityRatio": {
                    "shape": [
                        {"utilization": 0, "score": 10},
                        {"utilization": 50, "score": 0},
                        {"utilization": 100, "score": 5},
                    ]
                },
            },
            make_pod("p").cpu("1600m").obj(),
            [sized("a", "4", "10000")],
            None,
            [20],
            id="rtcr-broken-linear",
        ),
    ],
)
def test_score(
    strategy: dict[str, Any] | None,
    pod: Pod,
    nodes: list[Node],
    existing: dict[str, list[Pod]] | None,
    want: list[int],
) -> None:
    assert scores(strategy, pod, nodes, existing) == want


def test_score_without_prescore_matches() -> None:
    nodes = [sized("a", "4", "10000"), sized("b", "6", "10000")]
    assert scores(None, cpu_mem_pod(), nodes, pre_score=False) == [37, 50]


# --- queueing hints --------------------------------------------------------------------


def hint_for(resource: EventResource, action: ActionType, plugin: Fit | None = None) -> Any:
    plugin = plugin or Fit(None, FakeHandle())
    for reg in plugin.events_to_register():
        if reg.event.resource is resource and reg.event.action & action:
            return reg.hint
    raise AssertionError(f"no registration for {resource} {action}")


def test_registered_events_are_kube_schedulers() -> None:
    # Fit.EventsToRegister (v1.37.2, InPlacePodVerticalScaling and DRAExtendedResource
    # GA; the deferred-resize alpha gate not mirrored).
    registered = Fit(None, FakeHandle()).events_to_register()
    assert [(r.event.resource, r.event.action) for r in registered] == [
        (EventResource.POD, ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        (EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
        (EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
    ]
    assert all(r.hint is not None for r in registered)


TARGET = make_pod("target").cpu("1").memory("1Gi").obj()
Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(
    ("old", "want"),
    [
        pytest.param(make_pod("gone").obj(), SKIP, id="deleted-unscheduled-pod"),
        pytest.param(make_pod("gone").nominated("n1").obj(), Q, id="deleted-nominated-pod"),
        pytest.param(make_pod("gone").node("n1").obj(), Q, id="deleted-scheduled-pod"),
        # Any scheduled pod's delete, whatever it requested (Go does not compare).
        pytest.param(make_pod("gone").node("n1").request("example.com/g", "1").obj(), Q, id="any"),
    ],
)
def test_assigned_pod_delete_hint(old: Pod, want: QueueingHint) -> None:
    # isSchedulableAfterAssignedPodDelete.
    assert hint_for(EventResource.POD, ActionType.DELETE)(TARGET, old, None) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            make_pod("x").node("n1").cpu("2").obj(),
            make_pod("x").node("n1").cpu("1").obj(),
            Q,
            id="scheduled-pod-cpu-scaled-down",
        ),
        pytest.param(
            make_pod("x").node("n1").memory("2Gi").obj(),
            make_pod("x").node("n1").memory("1Gi").obj(),
            Q,
            id="scheduled-pod-memory-scaled-down",
        ),
        pytest.param(
            make_pod("x").node("n1").request("example.com/g", "2").obj(),
            make_pod("x").node("n1").request("example.com/g", "1").obj(),
            SKIP,
            id="scaled-down-resource-not-requested",
        ),
        pytest.param(
            make_pod("x").cpu("2").obj(), make_pod("x").cpu("1").obj(), SKIP, id="unscheduled-pod"
        ),
        pytest.param(
            make_pod("x").node("n1").cpu("1").obj(),
            make_pod("x").node("n1").cpu("1").label("a", "b").obj(),
            SKIP,
            id="unrelated-update",
        ),
    ],
)
def test_assigned_pod_scale_down_hint(old: Pod, new: Pod, want: QueueingHint) -> None:
    # isSchedulableAfterAssignedPodScaleDown -> haveEnoughRelevantResourcesDecreased.
    hint = hint_for(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN)
    assert hint(TARGET, old, new) is want


def test_in_place_resize_scale_down_is_the_event_and_the_hint_queues() -> None:
    # An in-place resize that lowered status resources: the queue gets a scale-down
    # event for the assigned pod (extractPodScaleDown with UseStatusResources), and the
    # hint sees the freed cpu. asched's requests are max(spec, status, allocated).
    from asched.scheduler.handlers import assigned_pod_update

    spec = make_pod("x").uid("ux").node("n1").cpu("500m")
    before = spec.obj()
    before = dataclasses.replace(
        before, requests=dataclasses.replace(before.requests, milli_cpu=2000)
    )
    after = spec.obj()
    event = assigned_pod_update(before, after)
    assert event.resource is EventResource.POD
    assert event.action & ActionType.UPDATE_POD_SCALE_DOWN
    hint = hint_for(EventResource.POD, event.action & ActionType.UPDATE_POD_SCALE_DOWN)
    assert hint(TARGET, before, after) is Q


def test_own_scale_down_requeues() -> None:
    # isSchedulableAfterTargetPodScaleDown: always Queue.
    hint = hint_for(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
    smaller = make_pod("target").uid(TARGET.uid).cpu("500m").obj()
    assert hint(TARGET, TARGET, smaller) is Q


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, sized("n", "500m", "8Gi"), SKIP, id="added-node-too-small"),
        pytest.param(None, sized("n", "2", "8Gi"), Q, id="added-node-fits"),
        pytest.param(sized("n", "2", "8Gi"), sized("n", "4", "8Gi"), Q, id="allocatable-grew"),
        pytest.param(
            sized("n", "2", "8Gi", extra={"example.com/x": "1"}),
            sized("n", "2", "8Gi"),
            SKIP,
            id="unrelated-allocatable-shrank",
        ),
        pytest.param(
            make_node("n").capacity(cpu="2", memory="8Gi", pods="10").obj(),
            make_node("n").capacity(cpu="2", memory="8Gi", pods="20").obj(),
            Q,
            id="more-pod-slots",
        ),
        pytest.param(
            sized("n", "500m", "8Gi"), sized("n", "800m", "8Gi"), SKIP, id="grew-but-too-small"
        ),
        pytest.param(sized("n", "2", "8Gi"), sized("n", "2", "8Gi"), SKIP, id="nothing-grew"),
    ],
)
def test_node_event_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    # isSchedulableAfterNodeChange.
    assert hint_for(EventResource.NODE, ActionType.ADD)(TARGET, old, new) is want


def test_node_hint_counts_ignored_resources_as_go_does() -> None:
    # isFit builds its request with computePodResourceRequest, which keeps resources
    # the args ignore: a node without them does not requeue the pod.
    plugin = Fit(FitArgs.from_dict({"ignoredResources": ["example.com/x"]}, "args"), FakeHandle())
    pod = make_pod("t").cpu("1").request("example.com/x", "1").obj()
    hint = hint_for(EventResource.NODE, ActionType.ADD, plugin)
    assert hint(pod, None, sized("n", "2", "8Gi")) is SKIP
    assert hint(pod, None, sized("n", "2", "8Gi", extra={"example.com/x": "1"})) is Q


@pytest.mark.parametrize(
    "strategy",
    [
        LEAST,
        MOST,
        {
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {
                "shape": [
                    {"utilization": 0, "score": 2},
                    {"utilization": 70, "score": 9},
                    {"utilization": 100, "score": 4},
                ]
            },
        },
    ],
    ids=["least", "most", "rtcr"],
)
def test_two_resource_fast_path_matches_the_general_scorer(strategy: dict[str, Any]) -> None:
    rng = random.Random(11)
    args = FitArgs.from_dict(
        {
            "scoringStrategy": {
                **strategy,
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory"}],
            }
        },
        "args",
    )
    scorer = build_scorer(args.scoring_strategy)
    for _ in range(2000):
        a0, a1 = rng.choice([0, rng.randint(1, 64_000)]), rng.randint(0, 2**36)
        r0, r1 = rng.randint(0, 80_000), rng.randint(0, 2**37)
        want = scorer([r0 if a0 else 0, r1 if a1 else 0], [a0, a1])
        assert scorer.pair(r0, a0, r1, a1) == want, (r0, a0, r1, a1)


# ---- DRA-backed extended resources (DRAExtendedResource, GA in 1.37) --------------------


def _classes_handle(*classes: dict[str, Any]) -> FakeHandle:
    return FakeHandle(stores={DEVICE_CLASSES.resource: [decode_device_class(c) for c in classes]})


def _gpu_class(name: str = "gpu", resource: str = "example.com/gpu", created: str = "") -> Any:
    body = dra.device_class(name)
    body["spec"]["extendedResourceName"] = resource
    if created:
        body["metadata"]["creationTimestamp"] = created
    return body


@pytest.mark.parametrize(
    ("resource", "node_has", "classes", "fits"),
    [
        # No class provides it: the node's allocatable decides, as without the gate.
        ("example.com/gpu", "0", (), False),
        # A class names it, and the node advertises none: DynamicResources' business.
        ("example.com/gpu", "0", (_gpu_class(),), True),
        # The node advertises it (too little): the node's allocatable decides.
        ("example.com/gpu", "1", (_gpu_class(),), False),
        # Every class is also deviceclass.resource.kubernetes.io/<name>.
        ("deviceclass.resource.kubernetes.io/gpu", "0", (dra.device_class("gpu"),), True),
    ],
)
def test_filter_delegates_a_resource_a_device_class_provides(
    resource: str, node_has: str, classes: tuple[Any, ...], fits: bool
) -> None:
    node = make_node("n1")
    if node_has != "0":
        node = node.resource(resource, node_has)
    pod = make_pod("p").request(resource, "2").obj()
    plugin = Fit(None, _classes_handle(*classes))
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    st = plugin.filter(state, pod, node_info(node.obj()))
    assert (st is None) == fits
    if not fits:
        assert st is not None
        assert st.reasons == (f"Insufficient {resource}",)


def test_the_oldest_class_naming_a_resource_wins() -> None:
    old = decode_device_class(_gpu_class("b-old", created="2026-01-01T00:00:00Z"))
    new = decode_device_class(_gpu_class("a-new", created="2026-02-01T00:00:00Z"))
    assert resolver([new, old])["example.com/gpu"].name == "b-old"
    tie = decode_device_class(_gpu_class("a-tie", created="2026-01-01T00:00:00Z"))
    assert resolver([old, tie])["example.com/gpu"].name == "a-tie"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        # Added, naming the pod's resource explicitly or implicitly: queue.
        (None, _gpu_class(), Q),
        (None, dra.device_class("gpu"), SKIP),
        (None, _gpu_class(resource="example.com/other"), SKIP),
        # Updated without a change of extendedResourceName: skip.
        (_gpu_class(), _gpu_class(), SKIP),
        # Updated to name the pod's resource: queue.
        (dra.device_class("gpu"), _gpu_class(), Q),
    ],
)
def test_device_class_hint(old: Any, new: Any, want: QueueingHint) -> None:
    pod = make_pod("p").request("example.com/gpu", "1").obj()
    plugin = Fit(None, FakeHandle())
    (hint,) = [
        r.hint
        for r in plugin.events_to_register()
        if r.event.resource == EventResource.DEVICE_CLASS
    ]
    assert hint is not None
    decoded_old = None if old is None else decode_device_class(old)
    assert hint(pod, decoded_old, decode_device_class(new)) == want
    implicit = make_pod("q").request("deviceclass.resource.kubernetes.io/gpu", "1").obj()
    assert hint(implicit, None, decode_device_class(dra.device_class("gpu"))) == Q


def _gpu_world(*slices: dict[str, Any], claims: tuple[dict[str, Any], ...] = ()) -> FakeHandle:
    return FakeHandle(
        stores={
            DEVICE_CLASSES.resource: [decode_device_class(_gpu_class())],
            RESOURCE_SLICES.resource: [decode_resource_slice(s) for s in slices],
            RESOURCE_CLAIMS.resource: [decode_resource_claim(c) for c in claims],
        }
    )


def test_a_scored_extended_resource_counts_the_class_devices() -> None:
    """calculateDRAExtendedResourceAllocatableRequest: with a scoring strategy that lists
    example.com/gpu, a node that does not advertise it scores it by its devices of the
    class (allocatable) and the allocated ones (requested). Node a has four GPUs, one of
    them allocated; node b two, none: LeastAllocated gives a (4-2)/4 and b (2-1)/2."""
    claim = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    claim["metadata"]["uid"] = "c"
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "a", "device": "g0"}
                ]
            }
        }
    }
    handle = _gpu_world(
        dra.resource_slice("a-gpu", "a", [dra.device(f"g{i}") for i in range(4)], pool="a"),
        dra.resource_slice("b-gpu", "b", [dra.device(f"g{i}") for i in range(2)], pool="b"),
        claims=(claim,),
    )
    args = FitArgs.from_dict(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "example.com/gpu", "weight": 1}],
            }
        },
        "args",
    )
    plugin = Fit(args, handle)
    pod = make_pod("p").request("example.com/gpu", "1").obj()
    state = CycleState()
    assert plugin.pre_score(state, pod, []) is None
    scores = {n: plugin.score(state, pod, node_info(make_node(n).obj())) for n in ("a", "b")}
    assert scores == {"a": 50, "b": 50}
    # Without the allocated claim a would have (4-1)/4.
    free = _gpu_world(
        dra.resource_slice("a-gpu", "a", [dra.device(f"g{i}") for i in range(4)], pool="a")
    )
    plugin = Fit(args, free)
    state = CycleState()
    plugin.pre_score(state, pod, [])
    assert plugin.score(state, pod, node_info(make_node("a").obj())) == 75
    # A node that advertises the resource is scored by its allocatable, as before.
    advertised = node_info(make_node("a").resource("example.com/gpu", "8").obj())
    assert plugin.score(state, pod, advertised) == 87


def test_dra_totals_follow_the_class_selectors_and_the_nodes_slices() -> None:
    """calculateDRAResourceTotals: a class's CEL selectors pick the devices; a slice of
    another node counts nothing, one for all nodes counts everywhere."""
    body = _gpu_class()
    body["spec"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}
    ]
    classes = resolver([decode_device_class(body)])
    everywhere = dra.resource_slice("shared", "", [dra.device("s0", {"model": "a100"})])
    del everywhere["spec"]["nodeName"]
    everywhere["spec"]["allNodes"] = True
    slices = [
        decode_resource_slice(
            dra.resource_slice(
                "a-gpu",
                "a",
                [dra.device("g0", {"model": "a100"}), dra.device("g1", {"model": "h100"})],
            )
        ),
        decode_resource_slice(everywhere),
    ]
    totals = DraTotals(classes, slices, AllocatedState(devices={("gpu.example.com", "a", "g0")}))
    assert totals.totals(make_node("a").obj(), "example.com/gpu") == (2, 1)
    assert totals.totals(make_node("b").obj(), "example.com/gpu") == (1, 0)
    assert totals.totals(make_node("a").obj(), "example.com/other") == (0, 0)
