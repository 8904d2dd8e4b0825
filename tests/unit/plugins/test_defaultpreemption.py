"""DefaultPreemption: eligibility, dry runs, candidate choice, PDBs, victim eviction, args.

The plugin runs inside a real Framework with the real NodeResourcesFit as PreFilter and
Filter, so dry runs remove and re-add pods the way the scheduler would; the Filter
statuses handed to PostFilter come from running those same filters on every node.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from asched.api import Node, Pod
from asched.backend.snapshot import Snapshot
from asched.client.protocol import ApiError
from asched.extender import ExtenderError, Extenders
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.extenders import PreemptionExtenders
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import ArgsError, PluginSpec, Registry
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Code, Status, error, unschedulable
from asched.framework.types import NodeToStatus, PostFilterResult
from asched.framework.waiting import WaitingPod
from asched.plugins.defaultpreemption import (
    NAME,
    PDB_INFORMER,
    SPEC,
    Candidate,
    DefaultPreemption,
    DefaultPreemptionArgs,
    PodDisruptionBudget,
    decode_pdb,
    pick_one_node_for_preemption,
)
from asched.plugins.defaultpreemption.pdb import split_by_pdb_violation
from asched.plugins.defaultpreemption.victims import select_victims_on_node
from asched.plugins.noderesources import FIT_SPEC, FitArgs
from asched.testing.fakes import wait_for
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.extender.fakes import fake_extender
from tests.unit.framework.fakes import FakeServices, Recorder, Sort
from tests.unit.plugins.fakes_pods import FakeStore, cluster

LOW, MID, HIGH, VERY_HIGH = 0, 100, 1000, 10000


# ---- harness -------------------------------------------------------------------------


class RecordingClient:
    """Records every request; `fail[(method, path)]` makes that request raise."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any, str]] = []
        self.fail: dict[tuple[str, str], ApiError] = {}
        self.in_flight = 0
        self.max_in_flight = 0

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            # A real request yields to the loop (and may be cancelled there).
            await anyio.lowlevel.checkpoint()
            self.requests.append((method, path, body, content_type))
            exc = self.fail.get((method, path))
            if exc is not None:
                raise exc
            return {}
        finally:
            self.in_flight -= 1

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None

    def deleted(self) -> list[str]:
        return [
            path.rsplit("/", 1)[1] for method, path, _, _ in self.requests if method == "DELETE"
        ]

    def deletes(self) -> list[tuple[str, Any]]:
        return [(path, body) for method, path, body, _ in self.requests if method == "DELETE"]

    def patches(self) -> list[tuple[str, Any, str]]:
        return [(path, body, ct) for method, path, body, ct in self.requests if method == "PATCH"]


class Services(FakeServices):
    def __init__(self, node_infos: Sequence[NodeInfo], pdbs: Iterable[PodDisruptionBudget]):
        super().__init__(Snapshot(node_infos))
        self.client = self.recording = RecordingClient()
        self.pdbs = FakeStore(pdbs)

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        assert request is PDB_INFORMER
        return self.pdbs

    #: Pending pods as the informer has them (the snapshot only holds assigned ones).
    pending: Sequence[Pod] = ()
    #: The scheduler's extenders (HasExtenders), set before the framework is built.
    extenders: PreemptionExtenders | None = None

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        assigned = super().pods_in_namespace(namespace)
        return [*assigned, *(p for p in self.pending if p.namespace == namespace)]


class FirstOffset(random.Random):
    """Makes the dry run start at candidate node `start`."""

    def __init__(self, start: int = 0) -> None:
        super().__init__(0)
        self.start = start

    def randrange(self, *args: Any, **kwargs: Any) -> int:
        return self.start


class Seen:
    """A Filter plugin that lets every pod pass and records the nodes it was asked about."""

    name = "Seen"

    def __init__(self, args: Any, handle: Any) -> None:
        self.nodes: list[str] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.nodes.append(node_info.name)
        return None


class Broken:
    """A PreFilter plugin whose dry-run extensions fail on nodes labelled error=true."""

    name = "Broken"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        return None, None

    def pre_filter_extensions(self) -> Broken:
        return self

    def _check(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        if node_info.node.labels.get("error") == "true":
            return error(f"failed to remove pod: {pod.name}", self.name)
        return None

    def add_pod(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._check(pod, node_info)

    def remove_pod(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._check(pod, node_info)


@dataclass
class Env:
    fwk: Framework
    services: Services
    plugin: DefaultPreemption
    state: CycleState = field(default_factory=CycleState)

    @property
    def seen(self) -> Seen:
        seen = self.fwk.plugins["Seen"]
        assert isinstance(seen, Seen)
        return seen

    @property
    def client(self) -> RecordingClient:
        return self.services.recording

    @property
    def events(self) -> list[tuple[str, str, str]]:
        recorder = self.services.events
        assert isinstance(recorder, Recorder)
        return recorder.events

    async def statuses(self, pod: Pod) -> NodeToStatus:
        """What the scheduling cycle hands PostFilter: every node's Filter status."""
        nodes = self.services.snapshot.node_infos()
        _, st, _ = await self.fwk.run_pre_filter(self.state, pod, nodes)
        assert st is None
        out = NodeToStatus()
        for ni in nodes:
            node_st = await self.fwk.run_filter_plugins_with_nominated_pods(self.state, pod, ni)
            assert node_st is not None, f"the pod fits {ni.name}: nothing to preempt for"
            out.set(ni.name, node_st)
        return out

    async def preempt(self, pod: Pod) -> tuple[PostFilterResult | None, Status | None]:
        """PostFilter, then the asynchronous preemption it started, to its end."""
        statuses = await self.statuses(pod)
        self.seen.nodes.clear()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.plugin.run)
            result = await self.plugin.post_filter(self.state, pod, statuses)
            await wait_for(lambda: not self.plugin.executor.busy, steps=10_000)
            tg.cancel_scope.cancel()
        return result

    def dry_run_nodes(self) -> list[str]:
        """The nodes preemption dry-ran, in order (Seen runs after NodeResourcesFit)."""
        return list(dict.fromkeys(self.seen.nodes))


def env(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    *,
    pdbs: Iterable[PodDisruptionBudget] = (),
    nominated: Mapping[str, list[Pod]] | None = None,
    args: DefaultPreemptionArgs | None = None,
    start: int = 0,
    broken: bool = False,
    extenders: PreemptionExtenders | None = None,
) -> Env:
    services = Services(cluster(nodes, pods), pdbs)
    services.extenders = extenders
    services.nominated = dict(nominated or {})
    registry = Registry()
    for spec in (
        PluginSpec("Sort", Sort),
        FIT_SPEC,
        SPEC,
        PluginSpec("Broken", Broken),
        PluginSpec("Seen", Seen),
    ):
        registry.register(spec)
    pre_filters = [("NodeResourcesFit", 0)] + ([("Broken", 0)] if broken else [])
    profile = ProfileSpec(
        "test",
        {
            "queueSort": [("Sort", 0)],
            "preFilter": pre_filters,
            "filter": [("NodeResourcesFit", 0), ("Seen", 0)],
            "postFilter": [(NAME, 0)],
        },
        {"NodeResourcesFit": FitArgs(), NAME: args or DefaultPreemptionArgs()},
    )
    fwk = Framework(profile, registry, services)
    plugin = fwk.plugins[NAME]
    assert isinstance(plugin, DefaultPreemption)
    plugin.rng = FirstOffset(start)
    return Env(fwk, services, plugin)


def node(name: str, cpu: str = "1", **labels: str) -> Node:
    return make_node(name).capacity(cpu=cpu).labels(labels).obj()


def running(
    name: str, on: str, cpu: str, priority: int = LOW, started: str = "2026-01-01T00:00:00Z"
) -> PodBuilder:
    return (
        make_pod(name)
        .uid(name)
        .label("app", name)
        .node(on)
        .cpu(cpu)
        .priority(priority)
        .created(started)
    )


def preemptor(cpu: str = "1", priority: int = HIGH) -> PodBuilder:
    return make_pod("p").uid("p").cpu(cpu).priority(priority)


def pdb(
    name: str,
    labels: dict[str, str],
    allowed: int,
    disrupted: Sequence[str] = (),
    namespace: str = "default",
) -> PodDisruptionBudget:
    return decode_pdb(
        {
            "metadata": {"namespace": namespace, "name": name},
            "spec": {"selector": {"matchLabels": labels}},
            "status": {
                "disruptionsAllowed": allowed,
                "disruptedPods": dict.fromkeys(disrupted, "2026-01-01T00:00:00Z"),
            },
        }
    )


# ---- PostFilter outcomes ----------------------------------------------------------------


@dataclass
class Case:
    nodes: list[Node]
    pods: list[Pod]
    pod: Pod
    want_node: str | None  # None: no PostFilterResult at all
    want_code: Code
    want_message: str = ""
    want_deleted: list[str] = field(default_factory=list)
    # The nodes dry-run, in order (None: not checked).
    want_dry_run: list[str] | None = None
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    start: int = 0
    args: DefaultPreemptionArgs | None = None


def placed(node: str, victims: int) -> Status:
    """DefaultPreemption's Success status (kube-scheduler 1.37 wording)."""
    return Status(
        Code.SUCCESS,
        (
            f"preemption: found a potential placement for pod on node {node}, "
            f"preempting {victims} victims",
        ),
        NAME,
    )


CASES = {
    "higher-priority-pod-preempts": Case(
        [node("n1")],
        [running("v", "n1", "1").obj()],
        preemptor().obj(),
        "n1",
        Code.SUCCESS,
        want_deleted=["v"],
    ),
    "preemption-policy-never": Case(
        [node("n1")],
        [running("v", "n1", "1").obj()],
        preemptor().preemption_policy("Never").obj(),
        None,
        Code.UNSCHEDULABLE,
        "preemption: not eligible due to preemptionPolicy=Never.",
    ),
    "tied-priority-has-no-victims": Case(
        [node("n1")],
        [running("v", "n1", "1", HIGH).obj()],
        preemptor().obj(),
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    "still-too-little-room-after-removing-all-lower": Case(
        [node("n1"), node("n2")],
        [
            running("a", "n1", "600m", HIGH).obj(),
            running("b", "n1", "400m").obj(),
            running("c", "n2", "600m", HIGH).obj(),
            running("d", "n2", "400m").obj(),
        ],
        preemptor("500m").obj(),
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    "unresolvable-nodes-are-not-tried": Case(
        [node("small", cpu="500m"), node("n2")],
        [running("a", "small", "500m").obj(), running("b", "n2", "1", VERY_HIGH).obj()],
        preemptor().obj(),
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.",
    ),
    "every-node-unresolvable": Case(
        [node("s1", cpu="500m"), node("s2", cpu="500m")],
        [running("a", "s1", "500m").obj()],
        preemptor().obj(),
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    ),
    "lowest-highest-victim-priority-wins": Case(
        [node("n1"), node("n2")],
        [running("mid", "n1", "1", MID).obj(), running("low", "n2", "1", LOW).obj()],
        preemptor(priority=VERY_HIGH).obj(),
        "n2",
        Code.SUCCESS,
        want_deleted=["low"],
    ),
    "fewest-victims-wins-at-equal-priority": Case(
        [node("n1"), node("n2")],
        [
            running("a", "n1", "500m").obj(),
            running("b", "n1", "500m").obj(),
            running("c", "n2", "1").obj(),
        ],
        preemptor().obj(),
        "n2",
        Code.SUCCESS,
        want_deleted=["c"],
    ),
    "unneeded-victims-are-reprieved-most-important-first": Case(
        [node("n1")],
        [
            running("keep-mid", "n1", "300m", MID).obj(),
            running("keep-old", "n1", "300m").obj(),
            running("evict", "n1", "400m", started="2026-01-02T00:00:00Z").obj(),
        ],
        preemptor("400m").obj(),
        "n1",
        Code.SUCCESS,
        want_deleted=["evict"],
    ),
    "node-without-pdb-violation-wins-over-cheaper-victims": Case(
        [node("n1"), node("n2")],
        [running("guarded", "n1", "1", LOW).obj(), running("free", "n2", "1", MID).obj()],
        preemptor().obj(),
        "n2",
        Code.SUCCESS,
        want_deleted=["free"],
        pdbs=[pdb("budget", {"app": "guarded"}, allowed=0)],
    ),
    "pdb-violating-victim-is-reprieved-first": Case(
        [node("n1")],
        [running("guarded", "n1", "500m").obj(), running("free", "n1", "500m").obj()],
        preemptor("500m").obj(),
        "n1",
        Code.SUCCESS,
        want_deleted=["free"],
        pdbs=[pdb("budget", {"app": "guarded"}, allowed=0)],
    ),
    "dry-run-stops-at-enough-candidates-from-the-offset": Case(
        [node("n1"), node("n2"), node("n3")],
        [
            running("cheap", "n1", "1", LOW).obj(),
            running("dear", "n2", "1", MID).obj(),
            running("x", "n3", "1", MID).obj(),
        ],
        preemptor().obj(),
        "n2",
        Code.SUCCESS,
        want_deleted=["dear"],
        want_dry_run=["n2"],
        start=1,
        args=DefaultPreemptionArgs(0, 1),
    ),
    "dry-run-goes-on-until-a-candidate-violates-no-pdb": Case(
        [node("n1"), node("n2"), node("n3")],
        [
            running("guarded", "n1", "1", LOW).obj(),
            running("dear", "n2", "1", MID).obj(),
            running("x", "n3", "1", MID).obj(),
        ],
        preemptor().obj(),
        "n2",
        Code.SUCCESS,
        want_deleted=["dear"],
        want_dry_run=["n1", "n2"],
        args=DefaultPreemptionArgs(0, 1),
        pdbs=[pdb("budget", {"app": "guarded"}, allowed=0)],
    ),
    "all-candidates-compared-when-the-limit-allows": Case(
        [node("n1"), node("n2")],
        [running("cheap", "n1", "1", LOW).obj(), running("dear", "n2", "1", MID).obj()],
        preemptor().obj(),
        "n1",
        Code.SUCCESS,
        want_deleted=["cheap"],
        want_dry_run=["n2", "n1"],
        start=1,
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_post_filter(case: Case) -> None:
    e = env(case.nodes, case.pods, pdbs=case.pdbs, start=case.start, args=case.args)
    result, st = await e.preempt(case.pod)
    if case.want_code == Code.SUCCESS:
        assert case.want_node is not None
        assert st == placed(case.want_node, len(case.want_deleted))
    else:
        assert st is not None
        assert (st.code, st.message()) == (case.want_code, case.want_message)
    assert result == (None if case.want_node is None else PostFilterResult(case.want_node))
    assert sorted(e.client.deleted()) == sorted(case.want_deleted)
    if case.want_dry_run is not None:
        assert e.dry_run_nodes() == case.want_dry_run


async def test_eviction_patches_condition_deletes_with_uid_and_records_event() -> None:
    e = env([node("n1")], [running("v", "n1", "1").obj()])
    pod = preemptor().scheduler("my-scheduler").obj()
    result, st = await e.preempt(pod)
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 1))
    [(path, body, content_type)] = e.client.patches()
    assert path == "/api/v1/namespaces/default/pods/v/status"
    assert content_type == "application/strategic-merge-patch+json"
    assert body["metadata"] == {"uid": "v"}
    [cond] = body["status"]["conditions"]
    assert cond == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "my-scheduler: preempting to accommodate a higher priority pod",
        "lastTransitionTime": "2023-11-14T22:13:20Z",  # FakeClock's wall time
    }
    assert e.client.deletes() == [
        (
            "/api/v1/namespaces/default/pods/v",
            {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "v"}},
        )
    ]
    # The condition is written before the pod is deleted.
    assert [m for m, *_ in e.client.requests] == ["PATCH", "DELETE"]
    assert e.events == [("Normal", "Preempted", "Preempted by pod p on node n1")]


async def test_terminating_victim_counts_but_gets_no_api_call() -> None:
    e = env(
        [node("n1")],
        [running("old", "n1", "500m").terminating().obj(), running("v", "n1", "500m").obj()],
    )
    result, st = await e.preempt(preemptor().obj())
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 2))
    assert e.client.deleted() == ["v"]


async def test_victim_waiting_at_permit_is_rejected_not_deleted() -> None:
    victim = running("w", "n1", "1").obj()
    e = env([node("n1")], [victim])
    wp = WaitingPod(victim, "n1", {"Gate": 30.0}, now=0.0)
    e.fwk.waiting_pods.add(wp)
    result, st = await e.preempt(preemptor().obj())
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 1))
    assert e.client.requests == []
    assert wp.decided
    assert await wp.wait(e.services.clock) == Status(Code.UNSCHEDULABLE, ("preempted",), NAME)
    # Executor.PreemptPod's in-memory suffix, with asched's own name for kube-scheduler's.
    assert e.events == [
        ("Normal", "Preempted", "Preempted by pod p on node n1 (in asched memory).")
    ]


@pytest.mark.parametrize(
    ("method", "status", "want_ok", "want_events"),
    [
        ("DELETE", 404, True, 0),
        ("DELETE", 409, True, 0),
        ("PATCH", 404, True, 0),
        ("DELETE", 500, False, 0),
        ("PATCH", 500, False, 0),
    ],
    ids=["delete-gone", "delete-replaced", "patch-gone", "delete-fails", "patch-fails"],
)
async def test_api_failures(method: str, status: int, want_ok: bool, want_events: int) -> None:
    e = env([node("n1")], [running("v", "n1", "1").obj()])
    path = "/api/v1/namespaces/default/pods/v" + ("/status" if method == "PATCH" else "")
    e.client.fail[(method, path)] = ApiError(status, "Reason", "boom", method, path)
    pod = preemptor().obj()
    result, st = await e.preempt(pod)
    # Asynchronous preemption: PostFilter has nominated the node before any API call.
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 1))
    # A failed call activates the preemptor (no deletion event will requeue it).
    assert [p.uid for p in e.services.activated] == ([] if want_ok else [pod.uid])
    assert len(e.events) == want_events


async def test_first_failure_cancels_the_other_evictions() -> None:
    e = env(
        [node("n1")],
        [
            running("a", "n1", "500m", started="2026-01-01T00:00:00Z").obj(),
            running("b", "n1", "500m", started="2026-01-02T00:00:00Z").obj(),
        ],
    )
    path = "/api/v1/namespaces/default/pods/a/status"
    e.client.fail[("PATCH", path)] = ApiError(500, "InternalError", "boom", "PATCH", path)
    pod = preemptor().obj()
    result, st = await e.preempt(pod)
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 2))
    # The first victim failed, so the last one (b) was never preempted.
    assert e.client.deleted() == []
    assert e.events == []
    assert [p.uid for p in e.services.activated] == [pod.uid]


@pytest.mark.parametrize("parallelism", [1, 2, 16], ids=lambda n: f"parallelism-{n}")
async def test_evictions_are_bounded_by_parallelism(parallelism: int) -> None:
    pods = [running(f"v{i}", "n1", "250m").obj() for i in range(4)]
    e = env([node("n1")], pods)
    e.services.parallelism = parallelism
    result, st = await e.preempt(preemptor().obj())
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 4))
    assert sorted(e.client.deleted()) == ["v0", "v1", "v2", "v3"]
    # All victims but the last in parallel, then the last alone (prepareCandidateAsync).
    assert e.client.max_in_flight == min(parallelism, 3)


async def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    low = make_pod("low").uid("low").priority(LOW).nominated("n1").obj()
    mem = make_pod("mem").uid("mem").priority(LOW).obj()  # nominated in memory only
    e = env([node("n1", cpu="2")], [running("v", "n1", "2").obj()], nominated={"n1": [low, mem]})
    result, st = await e.preempt(preemptor().obj())
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 1))
    clears = [
        (path, body)
        for path, body, _ in e.client.patches()
        if "nominatedNodeName" in body["status"]
    ]
    assert clears == [
        (
            "/api/v1/namespaces/default/pods/low/status",
            {"metadata": {"uid": "low"}, "status": {"nominatedNodeName": None}},
        )
    ]


async def test_higher_priority_nominated_pods_take_their_room_first() -> None:
    # n1 has room for one 1-cpu pod after eviction, but a higher-priority pod is
    # nominated there already, so only n2 is a candidate.
    other = make_pod("other").uid("other").cpu("1").priority(VERY_HIGH).obj()
    e = env(
        [node("n1"), node("n2")],
        [running("a", "n1", "1").obj(), running("b", "n2", "1", MID).obj()],
        nominated={"n1": [other]},
    )
    result, st = await e.preempt(preemptor().obj())
    assert (result, st) == (PostFilterResult("n2"), placed("n2", 1))
    assert e.client.deleted() == ["b"]


@pytest.mark.parametrize(
    ("nominated_status", "want_eligible"),
    [
        (unschedulable("Insufficient cpu"), False),
        (Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gone",)), True),
    ],
    ids=["waits-for-terminating-victim", "nominated-node-now-unresolvable"],
)
def test_eligibility_with_terminating_pod_on_nominated_node(
    nominated_status: Status, want_eligible: bool
) -> None:
    e = env([node("n1")], [running("t", "n1", "1").terminating().obj()])
    pod = preemptor().nominated("n1").obj()
    ok, why = e.plugin.pod_eligible_to_preempt_others(pod, nominated_status)
    assert ok is want_eligible
    assert why == (
        "" if want_eligible else "not eligible due to a terminating pod on the nominated node."
    )


async def test_preemptor_is_read_again_from_the_informer() -> None:
    # Evaluator.Preempt re-reads the preemptor from the pod lister: the nomination the
    # informer has now decides eligibility, not the one the pod was queued with.
    e = env([node("n1")], [running("t", "n1", "1").terminating().obj()])
    queued = preemptor().obj()
    e.services.pending = [dataclasses.replace(queued, nominated_node_name="n1")]
    result, st = await e.preempt(queued)
    assert result is None
    assert st is not None
    assert st.message() == (
        "preemption: not eligible due to a terminating pod on the nominated node."
    )


async def test_not_eligible_message_through_post_filter() -> None:
    e = env([node("n1")], [running("t", "n1", "1").terminating().obj()])
    pod = preemptor().nominated("n1").obj()
    result, st = await e.preempt(pod)
    assert result is None
    assert st is not None
    assert st.message() == (
        "preemption: not eligible due to a terminating pod on the nominated node."
    )


@pytest.mark.parametrize(
    ("nodes", "want_node", "want_error"),
    [
        (
            [node("bad", error="true")],
            None,
            'preemption: running RemovePod on PreFilter plugin "Broken": failed to remove pod: p',
        ),
        ([node("bad", error="true"), node("good")], "good", ""),
    ],
    ids=["only-node-errors", "other-node-still-chosen"],
)
async def test_dry_run_errors(nodes: list[Node], want_node: str | None, want_error: str) -> None:
    pods = [running(f"v-{n.name}", n.name, "1").obj() for n in nodes]
    e = env(nodes, pods, broken=True)
    result, st = await e.preempt(preemptor().obj())
    if want_node is None:
        assert result is None
        assert st is not None
        assert (st.code, st.message()) == (Code.ERROR, want_error)
    else:
        assert (result, st) == (PostFilterResult(want_node), placed(want_node, 1))


async def test_runs_through_the_framework_post_filter() -> None:
    e = env([node("n1")], [running("v", "n1", "1").obj()])
    pod = preemptor().obj()
    result, st = await e.fwk.run_post_filter(e.state, pod, await e.statuses(pod))
    assert result == PostFilterResult("n1")
    # kube-scheduler's RunPostFilterPlugins hands on the plugin's Success status (and its
    # message); a runtime that reduces success to None is accepted here too.
    assert st is None or st == placed("n1", 1)


async def test_success_says_where_and_how_many_victims() -> None:
    # kube-scheduler 1.37: the preemptor's FailedScheduling event ends with this message.
    e = env(
        [node("n1"), node("n2", cpu="2")],
        [
            running("a", "n2", "1").obj(),
            running("b", "n2", "1").obj(),
            running("c", "n1", "1", HIGH).obj(),
        ],
    )
    result, st = await e.preempt(preemptor("2").obj())
    assert result == PostFilterResult("n2")
    assert st is not None
    assert (st.code, st.message(), st.plugin) == (
        Code.SUCCESS,
        "preemption: found a potential placement for pod on node n2, preempting 2 victims",
        NAME,
    )


async def test_snapshot_is_not_mutated_by_dry_runs() -> None:
    e = env(
        [node("n1"), node("n2")],
        [running("a", "n1", "1").obj(), running("b", "n2", "1", MID).obj()],
    )
    before = {
        ni.name: (list(ni.pods), ni.requested.milli_cpu) for ni in e.services.snapshot.node_infos()
    }
    await e.preempt(preemptor().obj())
    after = {
        ni.name: (list(ni.pods), ni.requested.milli_cpu) for ni in e.services.snapshot.node_infos()
    }
    assert after == before


def test_registration() -> None:
    assert SPEC.extension_points() == frozenset({"preEnqueue", "postFilter", "podGroupPostFilter"})
    e = env([node("n1")])
    assert tuple(e.plugin.informers()) == (PDB_INFORMER,)
    assert PDB_INFORMER.list_path == "/apis/policy/v1/poddisruptionbudgets"


VICTIMS = {
    "importance-order-across-pdb-groups": (
        [running("guarded", "n1", "500m", LOW).obj(), running("free", "n1", "500m", MID).obj()],
        "1",
        ["free", "guarded"],
        1,
        None,
    ),
    "only-what-is-needed": (
        [running("a", "n1", "500m", MID).obj(), running("b", "n1", "500m", LOW).obj()],
        "500m",
        ["b"],
        0,
        None,
    ),
    "violating-victim-kept-when-possible": (
        [running("guarded", "n1", "500m", MID).obj(), running("free", "n1", "500m", LOW).obj()],
        "500m",
        ["free"],
        0,
        None,
    ),
    "no-lower-priority-pods": (
        [running("a", "n1", "1", HIGH).obj()],
        "1",
        [],
        0,
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",)
        ),
    ),
}


@pytest.mark.parametrize(
    ("pods", "cpu", "want", "want_violations", "want_status"),
    VICTIMS.values(),
    ids=VICTIMS.keys(),
)
async def test_select_victims_on_node(
    pods: list[Pod], cpu: str, want: list[str], want_violations: int, want_status: Status | None
) -> None:
    e = env([node("n1")], pods)
    pod = preemptor(cpu).obj()
    await e.statuses(pod)  # runs PreFilter into e.state
    ni = e.services.snapshot.node_infos()[0].clone()
    got = await select_victims_on_node(
        e.fwk, e.state.clone(), pod, ni, [pdb("budget", {"app": "guarded"}, allowed=0)]
    )
    assert ([p.name for p in got.pods], got.num_pdb_violations) == (want, want_violations)
    assert got.status == want_status


# ---- picking a node ------------------------------------------------------------------------


def _victim(name: str, priority: int, started: str = "2026-01-01T00:00:00Z") -> Pod:
    return make_pod(name).priority(priority).created(started).obj()


PICKS = {
    "fewest-pdb-violations": (
        [Candidate("n1", [_victim("a", LOW)], 1), Candidate("n2", [_victim("b", HIGH)], 0)],
        "n2",
    ),
    "lowest-highest-priority": (
        [Candidate("n1", [_victim("a", MID)]), Candidate("n2", [_victim("b", LOW)] * 3)],
        "n2",
    ),
    "smallest-priority-sum": (
        [
            Candidate("n1", [_victim("a", MID), _victim("b", MID)]),
            Candidate("n2", [_victim("c", MID), _victim("d", LOW)]),
        ],
        "n2",
    ),
    "negative-priorities-do-not-favour-more-victims": (
        [
            Candidate("n1", [_victim("a", -100), _victim("b", -100)]),
            Candidate("n2", [_victim("c", -100)]),
        ],
        "n2",
    ),
    "fewest-victims": (
        [
            Candidate("n1", [_victim("a", LOW), _victim("b", LOW)]),
            Candidate("n2", [_victim("c", LOW)]),
        ],
        "n2",
    ),
    "latest-start-of-top-victims": (
        [
            Candidate("n1", [_victim("a", MID, "2026-01-02T00:00:00Z"), _victim("b", LOW)]),
            Candidate("n2", [_victim("c", MID, "2026-01-03T00:00:00Z"), _victim("d", LOW)]),
        ],
        "n2",
    ),
    "full-tie-takes-the-first": (
        [Candidate("n1", [_victim("a", LOW)]), Candidate("n2", [_victim("b", LOW)])],
        "n1",
    ),
}


@pytest.mark.parametrize(("candidates", "want"), PICKS.values(), ids=PICKS.keys())
def test_pick_one_node_for_preemption(candidates: list[Candidate], want: str) -> None:
    best = pick_one_node_for_preemption(candidates)
    assert best is not None
    assert best.node_name == want


def test_pick_from_nothing() -> None:
    assert pick_one_node_for_preemption([]) is None


# ---- PodDisruptionBudgets ------------------------------------------------------------------


def _labelled(name: str, namespace: str = "default", **labels: str) -> Pod:
    return make_pod(name, namespace).labels(labels).obj()


SPLITS = {
    "budget-spent-in-order": (
        [_labelled("a", app="x"), _labelled("b", app="x")],
        [pdb("x", {"app": "x"}, 1)],
        ["b"],
    ),
    "already-disrupted-pods-do-not-spend": (
        [_labelled("a", app="x"), _labelled("b", app="x")],
        [pdb("x", {"app": "x"}, 1, disrupted=["a"])],
        [],
    ),
    "other-namespace-is-not-covered": (
        [_labelled("a", "other", app="x")],
        [pdb("x", {"app": "x"}, 0)],
        [],
    ),
    "empty-selector-matches-nothing": (
        [_labelled("a", app="x")],
        [pdb("x", {}, 0)],
        [],
    ),
    "unlabelled-pod-matches-nothing": (
        [_labelled("a")],
        [pdb("x", {}, 0)],
        [],
    ),
    "any-spent-budget-violates": (
        [_labelled("a", app="x", tier="t")],
        [pdb("x", {"app": "x"}, 5), pdb("t", {"tier": "t"}, 0)],
        ["a"],
    ),
    # podIsViolating returns at the first budget that goes negative: the later budget
    # "t" is not charged for a, so it still has room for b.
    "budgets-after-the-violated-one-are-not-charged": (
        [_labelled("a", app="x", tier="t"), _labelled("b", tier="t")],
        [pdb("x", {"app": "x"}, 0), pdb("t", {"tier": "t"}, 1)],
        ["a"],
    ),
}


@pytest.mark.parametrize(("pods", "pdbs", "want_violating"), SPLITS.values(), ids=SPLITS.keys())
def test_split_by_pdb_violation(
    pods: list[Pod], pdbs: list[PodDisruptionBudget], want_violating: list[str]
) -> None:
    violating, non_violating = split_by_pdb_violation(pods, pdbs)
    assert [p.name for p in violating] == want_violating
    assert [p.name for p in non_violating] == [p.name for p in pods if p.name not in want_violating]


def test_decode_pdb() -> None:
    got = decode_pdb(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"namespace": "ns", "name": "b"},
            "spec": {
                "minAvailable": 1,
                "selector": {
                    "matchExpressions": [{"key": "app", "operator": "In", "values": ["x"]}]
                },
            },
            "status": {"disruptionsAllowed": 2, "disruptedPods": {"p1": "2026-01-01T00:00:00Z"}},
        }
    )
    assert (got.namespace, got.name, got.disruptions_allowed, got.disrupted_pods) == (
        "ns",
        "b",
        2,
        frozenset({"p1"}),
    )
    assert got.selects(_labelled("q", "ns", app="x"))
    assert not got.selects(_labelled("q", "ns", app="y"))


def test_decode_pdb_with_unreadable_selector_selects_nothing() -> None:
    got = decode_pdb(
        {
            "metadata": {"namespace": "ns", "name": "b"},
            "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}},
        }
    )
    assert got.selector is None
    assert got.disruptions_allowed == 0
    assert not got.selects(_labelled("q", "ns", app="x"))


# ---- args ------------------------------------------------------------------------------------


ARGS_OK = {
    "defaults": ({}, DefaultPreemptionArgs(10, 100)),
    "custom": (
        {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 50},
        DefaultPreemptionArgs(20, 50),
    ),
    "zero-percentage": ({"minCandidateNodesPercentage": 0}, DefaultPreemptionArgs(0, 100)),
    "zero-absolute": ({"minCandidateNodesAbsolute": 0}, DefaultPreemptionArgs(10, 0)),
}


@pytest.mark.parametrize(("raw", "want"), ARGS_OK.values(), ids=ARGS_OK.keys())
def test_args(raw: dict[str, Any], want: DefaultPreemptionArgs) -> None:
    assert DefaultPreemptionArgs.from_dict(raw, "args") == want


ARGS_BAD = {
    "percentage-above-100": (
        {"minCandidateNodesPercentage": 101},
        "args.minCandidateNodesPercentage",
        "Invalid value: 101: not in valid range [0, 100]",
    ),
    "negative-percentage": (
        {"minCandidateNodesPercentage": -1},
        "args.minCandidateNodesPercentage",
        "Invalid value: -1: not in valid range [0, 100]",
    ),
    "negative-absolute": (
        {"minCandidateNodesAbsolute": -1},
        "args.minCandidateNodesAbsolute",
        "Invalid value: -1: not in valid range [0, inf)",
    ),
    "both-zero": (
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
        "args.minCandidateNodesPercentage",
        "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
    ),
    "unknown-field": ({"minCandidateNodes": 1}, "args.minCandidateNodes", "unknown field"),
    "not-an-integer": (
        {"minCandidateNodesAbsolute": "5"},
        "args.minCandidateNodesAbsolute",
        "must be an integer, got '5'",
    ),
}


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_BAD.values(), ids=ARGS_BAD.keys())
def test_args_rejected(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as info:
        DefaultPreemptionArgs.from_dict(raw, "args")
    assert (info.value.path, info.value.message) == (path, message)


@pytest.mark.parametrize(
    ("args", "num_nodes", "want"),
    [
        (DefaultPreemptionArgs(10, 100), 50, 50),
        (DefaultPreemptionArgs(10, 100), 5000, 500),
        (DefaultPreemptionArgs(10, 100), 1000, 100),
        (DefaultPreemptionArgs(0, 1), 30, 1),
        (DefaultPreemptionArgs(50, 0), 7, 3),
    ],
    ids=["capped-by-nodes", "percentage", "absolute-floor", "absolute-only", "percentage-only"],
)
def test_num_candidates(args: DefaultPreemptionArgs, num_nodes: int, want: int) -> None:
    assert args.num_candidates(num_nodes) == want


# ---- Asynchronous preemption (SchedulerAsyncPreemption, beta and on in 1.37) -----------


async def test_post_filter_nominates_before_any_victim_is_touched() -> None:
    """prepareCandidateAsync: PostFilter returns the node at once; until the background
    work runs, PreEnqueue holds the preemptor back with Go's message."""
    e = env([node("n1")], [running("v", "n1", "1").obj()])
    pod = preemptor().obj()
    statuses = await e.statuses(pod)
    result, st = await e.plugin.post_filter(e.state, pod, statuses)
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 1))
    assert e.client.requests == []
    gate = e.plugin.pre_enqueue(pod)
    assert gate is not None
    assert (gate.code, gate.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("waiting for the preemption for this pod to be finished",),
    )
    assert e.plugin.pre_enqueue(make_pod("q").uid("q").obj()) is None
    async with anyio.create_task_group() as tg:
        tg.start_soon(e.plugin.run)
        await wait_for(lambda: not e.plugin.executor.busy, steps=10_000)
        tg.cancel_scope.cancel()
    assert e.client.deleted() == ["v"]
    assert e.plugin.pre_enqueue(pod) is None
    assert e.services.activated == []


def test_the_last_victim_decides_while_its_deletion_is_under_way() -> None:
    """isRunningPreemption: once the last victim's turn has come, the preemption counts as
    done when that victim is gone or terminating, even before the work has returned (its
    deletion event may arrive first)."""

    def running_preemption(victims: list[Pod], last_turn: bool) -> bool:
        e = env([node("n1")], victims)
        e.services.pending = victims  # what the informer has
        executor = e.plugin.executor
        executor._preempting.add("p")
        if last_turn:
            executor._last_victim["p"] = ("default", "last")
        return executor.is_running("p")

    last = running("last", "n1", "1")
    assert running_preemption([last.obj()], last_turn=False)  # pending
    assert running_preemption([last.obj()], last_turn=True)  # the victim still runs
    assert not running_preemption([last.terminating().obj()], last_turn=True)
    assert not running_preemption([], last_turn=True)  # gone


async def test_a_victim_preempted_only_in_memory_activates_the_preemptor() -> None:
    victim = running("w", "n1", "1").obj()
    e = env([node("n1")], [victim])
    e.fwk.waiting_pods.add(WaitingPod(victim, "n1", {"Gate": 30.0}, now=0.0))
    pod = preemptor().obj()
    await e.preempt(pod)
    assert [p.uid for p in e.services.activated] == [pod.uid]


def test_assigned_pod_deletion_is_registered_and_always_skips() -> None:
    """isPodSchedulableAfterAssignedPodDeletion: the plugins the preemption is for requeue
    the pod; this one only needs the event registered to be asked about gated pods."""
    e = env([node("n1")])
    (reg,) = e.plugin.events_to_register()
    assert (reg.event.resource, reg.event.action) == (EventResource.POD, ActionType.DELETE)
    assert reg.hint is not None
    gone = running("v", "n1", "1").obj()
    assert reg.hint(preemptor().obj(), gone, None) == QueueingHint.QUEUE_SKIP


async def test_a_victim_in_pre_bind_is_cancelled_not_deleted() -> None:
    """Executor.PreemptPod's second in-memory path: a victim whose PreBind runs is
    cancelled there (CancelPod); no API call, the in-memory event suffix, and the
    preemptor is activated because no deletion event will come."""
    victim = running("b", "n1", "1").obj()
    e = env([node("n1")], [victim])
    entry = e.fwk.pods_in_pre_bind.add(victim.uid)
    pod = preemptor().obj()
    result, st = await e.preempt(pod)
    assert (result, st) == (PostFilterResult("n1"), placed("n1", 1))
    assert e.client.requests == []
    assert entry.message == "preempted by DefaultPreemption"
    assert e.events == [
        ("Normal", "Preempted", "Preempted by pod p on node n1 (in asched memory).")
    ]
    assert [p.uid for p in e.services.activated] == [pod.uid]


async def test_a_pod_groups_preemption_holds_back_every_member() -> None:
    """actuatePodGroupPreemption with async preemption: the group's uid is what runs; a
    member waits "for this pod group", a pod outside the group does not wait, and all
    members are activated when no deletion event will come."""
    victim = running("v", "n1", "1").obj()
    e = env([node("n1")], [victim])
    members = [make_pod(f"m{i}").uid(f"m{i}").scheduling_group("g").obj() for i in range(2)]
    candidate = Candidate("n1", [victim], 0)
    e.plugin.executor.prepare_candidate_async(
        candidate, members[0], group=("default/g", "group-uid"), pods=members
    )
    gate = e.plugin.pre_enqueue(members[1])
    assert gate is not None
    assert gate.reasons == ("waiting for the preemption for this pod group to be finished",)
    assert e.plugin.pre_enqueue(make_pod("other").uid("other").obj()) is None
    assert e.plugin.pre_enqueue(make_pod("x").uid("x").scheduling_group("h").obj()) is None
    e.client.fail[("DELETE", "/api/v1/namespaces/default/pods/v")] = ApiError(
        500, "InternalError", "boom", "DELETE", "/api/v1/namespaces/default/pods/v"
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(e.plugin.run)
        await wait_for(lambda: not e.plugin.executor.busy, steps=10_000)
        tg.cancel_scope.cancel()
    assert e.plugin.pre_enqueue(members[1]) is None
    assert [p.uid for p in e.services.activated] == ["m0", "m1"]


async def test_a_composites_preemption_holds_back_every_pod_group_and_names_the_root() -> None:
    """A CompositePodGroup root preempts: the members of each of its PodGroups wait for
    it, and the victim's event names the composite ("Preempted by compositepodgroup")."""
    victim = running("v", "n1", "1").obj()
    e = env([node("n1")], [victim])
    a = make_pod("a").uid("a").scheduling_group("g1").obj()
    b = make_pod("b").uid("b").scheduling_group("g2").obj()
    e.plugin.executor.prepare_candidate_async(
        Candidate("n1", [victim], 0),
        a,
        group=("default/cg", "cpg-uid"),
        pods=[a, b],
        kind="compositepodgroup",
        held=["default/g1", "default/g2"],
    )
    for member in (a, b):
        gate = e.plugin.pre_enqueue(member)
        assert gate is not None
        assert gate.reasons == ("waiting for the preemption for this pod group to be finished",)
    async with anyio.create_task_group() as tg:
        tg.start_soon(e.plugin.run)
        await wait_for(lambda: not e.plugin.executor.busy, steps=10_000)
        tg.cancel_scope.cancel()
    assert [m for _, reason, m in e.events if reason == "Preempted"] == [
        "Preempted by compositepodgroup cpg-uid on node n1"
    ]


# ---- extenders (callExtenders) ---------------------------------------------------------


def _two_candidates(extenders: PreemptionExtenders) -> Env:
    """n1 would lose a HIGH pod, n2 a LOW one: without extenders n2 is the pick."""
    return env(
        [node("n1"), node("n2")],
        [running("a", "n1", "1", MID).obj(), running("b", "n2", "1").obj()],
        extenders=extenders,
    )


async def test_preempting_extender_narrows_the_candidates() -> None:
    asked: list[Any] = []

    def keep_n1(verb: str, request: Any) -> Any:
        asked.append(request["NodeNameToMetaVictims"])
        return {"NodeNameToMetaVictims": {"n1": request["NodeNameToMetaVictims"]["n1"]}}

    ext, _ = fake_extender(keep_n1, preempt_verb="preempt", node_cache_capable=True)
    e = _two_candidates(Extenders([ext]))
    result, _st = await e.preempt(preemptor("1", HIGH).obj())
    assert asked == [
        {
            "n1": {"Pods": [{"UID": "a"}], "NumPDBViolations": 0},
            "n2": {"Pods": [{"UID": "b"}], "NumPDBViolations": 0},
        }
    ]
    assert result == PostFilterResult("n1")
    assert e.client.deleted() == ["a"]


async def test_preempting_extender_that_keeps_nothing() -> None:
    ext, _ = fake_extender(
        lambda v, r: {"NodeNameToMetaVictims": {}}, preempt_verb="preempt", node_cache_capable=True
    )
    result, st = await _two_candidates(Extenders([ext])).preempt(preemptor("1", HIGH).obj())
    assert result is None
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE,
        "preemption: no candidate node for preemption",
    )


async def test_preempting_extender_failure_is_an_error() -> None:
    down = ExtenderError("failed preempt with extender at URL http://ext/preempt, code 503")
    ext, _ = fake_extender(lambda v, r: down, preempt_verb="preempt")
    e = _two_candidates(Extenders([ext]))
    result, st = await e.preempt(preemptor("1", HIGH).obj())
    assert result is None
    assert st is not None
    assert (st.code, st.message()) == (Code.ERROR, f"preemption: {down}")
    assert e.client.deleted() == []
