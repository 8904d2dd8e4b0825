"""Small plugins and services for framework and algorithm tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.client.protocol import KubeClient
from asched.framework import status as st
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import ClusterEventWithHint
from asched.framework.handle import EventRecorder
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec, Registry
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.services import RuntimeMetrics
from asched.framework.status import Status
from asched.framework.types import (
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from asched.informers.store import Store

CALLS: list[str] = []


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        self.events.append((event_type, reason, message))


class FakeServices:
    def __init__(self, snapshot: Snapshot | None = None) -> None:
        self.clock = FakeClock()
        self.client: KubeClient = None  # type: ignore[assignment]
        self.events: EventRecorder = Recorder()
        self.snapshot: SnapshotLister = snapshot or Snapshot()
        self.parallelism = 16
        self.metrics: RuntimeMetrics | None = None
        self.nominated: dict[str, list[Pod]] = {}
        self.activated: list[Pod] = []

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        raise KeyError(request.resource)

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return []

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self.nominated.get(node_name, [])

    def has_nominated_pods(self) -> bool:
        return any(self.nominated.values())

    def activate(self, pods: Sequence[Pod]) -> None:
        self.activated.extend(pods)


class EmptyStores(FakeServices):
    """Every informer store exists and is empty: no Services, ReplicaSets, DeviceClasses
    ... (what the real default plugins read)."""

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        super().__init__(snapshot)
        self._stores: dict[str, Store[Any]] = {}

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        store: Store[Any] = self._stores.setdefault(request.resource, Store())
        return store


class Sort:
    name = "Sort"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


ALLOWED: StateKey[frozenset[str]] = StateKey("Label/allowed")


class LabelFilter:
    """Filters nodes without label `ok=true`; PreFilter narrows to nodes named in `only`."""

    name = "Label"

    def __init__(self, args: Any, handle: Any) -> None:
        self.only: frozenset[str] | None = args

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        CALLS.append("PreFilter")
        if pod.labels.get("prefilter") == "reject":
            return None, st.unresolvable("pod rejected at prefilter", plugin=self.name)
        if pod.labels.get("prefilter") == "skip":
            return None, st.skip()
        if self.only is not None:
            return PreFilterResult(self.only), None
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        if node_info.node.labels.get("ok") != "true":
            return st.unschedulable("node(s) didn't have ok=true")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []


class Boom:
    name = "Boom"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if pod.labels.get("boom"):
            raise RuntimeError("kaboom")
        return None


class AsyncFilter:
    name = "AsyncFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if "-slow-reject" in node_info.name:
            return st.unschedulable("async says no")
        return None


class Prefer:
    """Scores the node named by the pod's `prefer` label 10, others by name length."""

    name = "Prefer"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        if "raw" in pod.labels:  # a fixed raw score, to test the range check
            return int(pod.labels["raw"])
        return 10 if node_info.name == pod.labels.get("prefer") else 1

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        top = max(s.score for s in scores) or 1
        for s in scores:
            s.score = s.score * 100 // top
        return None


class Gate:
    """Reserve/Permit per pod labels: reserve=fail, permit=reject|wait."""

    name = "Gate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.unreserved: list[str] = []

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        CALLS.append("Reserve")
        if pod.labels.get("reserve") == "fail":
            return st.unschedulable("reserve failed")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved.append(pod.name)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        verdict = pod.labels.get("permit")
        if verdict == "reject":
            return st.unschedulable("permit rejected"), 0
        if verdict == "wait":
            return st.wait(), float(pod.labels.get("timeout", "30"))
        return None, 0


class Binder:
    name = "Binder"

    def __init__(self, args: Any, handle: Any) -> None:
        self.bound: list[tuple[str, str]] = []

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.bound.append((pod.name, node_name))
        return None


class RaisingBinder:
    """Raises `error` from Bind (set it on the plugin instance)."""

    name = "RaisingBinder"

    def __init__(self, args: Any, handle: Any) -> None:
        self.error: Exception = RuntimeError("unset")

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        raise self.error


class SkipBinder:
    name = "SkipBinder"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return st.skip()


class Preempt:
    name = "Preempt"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        if pod.labels.get("nominate"):
            return PostFilterResult(pod.labels["nominate"]), None
        return None, st.unschedulable("preemption: not eligible")


def registry() -> Registry:
    reg = Registry()
    for cls in (
        Sort,
        LabelFilter,
        Boom,
        AsyncFilter,
        Prefer,
        Gate,
        Binder,
        SkipBinder,
        Preempt,
        RaisingBinder,
    ):
        reg.register(PluginSpec(cls.name, cls))
    return reg


def framework(
    *,
    filters: Sequence[str] = ("Label",),
    scores: Sequence[tuple[str, int]] = (("Prefer", 1),),
    binders: Sequence[str] = ("Binder",),
    args: dict[str, Any] | None = None,
    services: FakeServices | None = None,
    percentage: int | None = None,
) -> Framework:
    plugins = {
        "queueSort": [("Sort", 0)],
        "preFilter": [(f, 0) for f in filters if f == "Label"],
        "filter": [(f, 0) for f in filters],
        "postFilter": [("Preempt", 0)],
        "score": list(scores),
        "reserve": [("Gate", 0)],
        "permit": [("Gate", 0)],
        "bind": [(b, 0) for b in binders],
    }
    profile = ProfileSpec("test", plugins, args or {}, percentage)
    return Framework(profile, registry(), services or FakeServices())
