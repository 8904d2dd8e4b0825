"""A scheduler without a network, for gang scenarios: the real cycles around Coscheduling.

`GangCluster` wires asched's own SchedulingCycle, BindingCycle and Outcomes over the real
Cache, Snapshot and Framework, with the in-tree Coscheduling and NodeResourcesFit plugins.
Only the edges are doubles: the pod informer's store is filled by the test, a Bind plugin
plays the API server and the watch that follows (the bound pod lands in the store and is
confirmed in the cache), and the queue records how each attempt ended instead of holding
pods. Tests choose which pod goes next (`attempt`), as the queue's retries would, and
advance a FakeClock; they read outcomes - bindings, the FailedScheduling messages, what
was requeued - never timings.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import anyio
import anyio.abc

from asched.api import Node, Pod
from asched.api.podgroup import PodGroup
from asched.backend.cache import Cache
from asched.backend.nominator import Nominator
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, KubeClient
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.handle import EventRecorder
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.services import RuntimeMetrics
from asched.framework.status import Status
from asched.framework.types import QueuedPodInfo
from asched.informers.store import Store
from asched.plugins.coscheduling import NAME, PODGROUP_INFORMER, Coscheduling, CoschedulingArgs
from asched.plugins.registry import in_tree_registry
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.cycle import Assumed, BindingCycle, SchedulingCycle
from asched.scheduler.outcome import Outcomes
from asched.scheduler.podview import POD_INDEXERS, PodView
from tests.unit.plugins.coscheduling.fakes import GroupStore
from tests.unit.plugins.fakes import FakeEvents, RecordingClient

PROFILE = "default-scheduler"
BINDER = "InformerBinder"


class _Queue:
    """The queue operations the cycles call, recorded: how each attempt ended."""

    def __init__(self) -> None:
        self.nominator = Nominator()
        self.ended: list[str] = []  # pod names, in order
        self.requeued: list[tuple[str, bool]] = []  # (pod name, as an error)
        self.moves: list[str] = []  # cluster events that would move pods
        self.activated: list[Pod] = []
        self._names: dict[str, str] = {}

    def named(self, pod: Pod) -> None:
        self._names[pod.uid] = pod.name

    def done(self, uid: str) -> None:
        self.ended.append(self._names.get(uid, uid))

    def add_unschedulable_if_not_present(
        self,
        qpi: QueuedPodInfo,
        *,
        error: bool = False,
        entity_size: int = 1,
        group_siblings: Sequence[str] | None = None,
    ) -> None:
        self.requeued.append((qpi.pod.name, error))
        self.done(qpi.pod.uid)

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, old: object | None, new: object | None, *, keep: str = ""
    ) -> int:
        self.moves.append(event.label)
        return 0


class _Conditions:
    def set_unschedulable(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        pass


class _Services:
    """SchedulerServices over the test's stores, the real cache and the pod view."""

    def __init__(self, cluster: GangCluster) -> None:
        self._c = cluster
        self.parallelism = 4
        self.metrics: RuntimeMetrics | None = None

    @property
    def clock(self) -> FakeClock:
        return self._c.clock

    @property
    def client(self) -> KubeClient:
        return self._c.client

    @property
    def events(self) -> EventRecorder:
        return self._c.events

    @property
    def snapshot(self) -> SnapshotLister:
        return self._c.snapshot

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        assert request.resource == PODGROUP_INFORMER.resource
        return self._c.groups

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self._c.view.pods_in_namespace(namespace)

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._c.view.pods_in_group(namespace, name)

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._c.view.pods_in_scheduling_group(namespace, name)

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        return self._c.view.scheduling_group_size(namespace, name)

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        return self._c.view.scheduled_in_scheduling_group(namespace, name)

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return []

    def has_nominated_pods(self) -> bool:
        return False

    def activate(self, pods: Sequence[Pod]) -> None:
        self._c.queue.activated.extend(pods)


class InformerBinder:
    """Binds as the API server would, then delivers what the pod watch would: the pod with
    its node in the informer store, and the assumed pod confirmed in the cache."""

    name = BINDER

    def __init__(self, cluster: GangCluster) -> None:
        self._c = cluster

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        await anyio.lowlevel.checkpoint()
        if pod.name in self._c.bind_fails:
            raise ApiError(500, "InternalError", "etcd timeout", "POST", "binding")
        self._c.bound[pod.name] = node_name
        self._c.add(dataclasses.replace(pod, node_name=node_name))
        return None


class GangCluster:
    def __init__(
        self,
        nodes: Iterable[Node] = (),
        groups: Iterable[PodGroup] = (),
        **args: int,
    ) -> None:
        self.clock = FakeClock()
        self.client = RecordingClient()
        self.events = FakeEvents()
        self.groups = GroupStore(groups)
        self.cache = Cache()
        for node in nodes:
            self.cache.add_node(node)
        self.snapshot = Snapshot()
        self.store: Store[Pod] = Store(POD_INDEXERS)
        self.view = PodView(self.store, self.cache)
        self.queue = _Queue()
        self.bound: dict[str, str] = {}  # pod name -> node, in binding order
        self.bind_fails: set[str] = set()  # pod names whose Binding the API server fails
        # The PodGroups with members parked at Permit, after every scheduling cycle: the
        # gate's invariant is that there is at most one.
        self.partial_groups_seen: list[set[str]] = []
        registry = in_tree_registry()
        cluster = self

        class Binder(InformerBinder):  # built by the registry as (args, handle)
            def __init__(self, args: Any, handle: Any) -> None:
                super().__init__(cluster)

        registry.register(PluginSpec(BINDER, Binder))
        cos = [(NAME, 0)]
        profile = ProfileSpec(
            PROFILE,
            {
                "queueSort": cos,
                "preEnqueue": cos,
                "preFilter": [*cos, ("NodeResourcesFit", 0)],
                "filter": [("NodeResourcesFit", 0)],
                "postFilter": cos,
                "reserve": cos,
                "permit": cos,
                "bind": [(BINDER, 0)],
                "postBind": cos,
            },
            {NAME: CoschedulingArgs(**args)},
        )
        self.fwk = Framework(profile, registry, _Services(self))
        outcomes = Outcomes(
            queue=self.queue,
            current_pod=self.store.get,
            events=lambda profile: self.events,
            conditions=_Conditions(),
            clock=self.clock,
        )
        self._binding_tasks: list[Assumed] = []
        self.scheduling = SchedulingCycle(
            frameworks={PROFILE: self.fwk},
            cache=self.cache,
            snapshot=self.snapshot,
            algorithm=Algorithm(100),
            queue=self.queue,
            outcomes=outcomes,
            skip=lambda pod: self.cache.is_assumed(pod.uid),
            to_binding=self._binding_tasks.append,
        )
        self.binding = BindingCycle(
            cache=self.cache,
            queue=self.queue,
            outcomes=outcomes,
            events=lambda profile: self.events,
            limiter=asyncio.Semaphore(4),
        )

    @property
    def plugin(self) -> Coscheduling:
        pl = self.fwk.plugins[NAME]
        assert isinstance(pl, Coscheduling)
        return pl

    # -- the informer's side --------------------------------------------------------------

    def add(self, *pods: Pod) -> None:
        """Pods the informer delivers (new or updated); assigned ones go to the cache."""
        for pod in pods:
            self.queue.named(pod)
            old = self.store.get(pod.key)
            self.store.upsert(pod.key, pod, pod.resource_version)
            if pod.node_name:
                if old is not None and old.node_name:
                    self.cache.update_pod(old, pod)
                else:
                    self.cache.add_pod(pod)

    def pod(self, pod: Pod) -> Pod:
        """The scheduler's view of *pod*: assumed or bound pods carry their node."""
        current = self.store.get(pod.key) or pod
        return self.cache.get_pod(pod.uid) or current

    def nodes(self) -> list[NodeInfo]:
        self.cache.update_snapshot(self.snapshot)
        return list(self.snapshot.node_infos())

    def activated_names(self) -> list[str]:
        return sorted({p.name for p in self.queue.activated})

    def waiting_groups(self) -> set[str]:
        return {
            wp.pod.labels.get("scheduling.x-k8s.io/pod-group", "")
            for wp in self.fwk.waiting_pods
            if not wp.decided
        }

    # -- the scheduler's side -------------------------------------------------------------

    async def attempt(self, pod: Pod, tg: anyio.abc.TaskGroup) -> str:
        """One scheduling cycle for *pod*, its binding cycle started in *tg*.

        Returns "gated: <message>" when PreEnqueue keeps it out of the queue, "bound",
        "waiting" (parked at Permit), or the FailedScheduling message it got.
        """
        pod = self.store.get(pod.key) or pod
        gated = self.fwk.run_pre_enqueue(pod)
        if gated is not None:
            return f"gated: {gated[1].message()}"
        before = len(self.events.recorded)
        await self.scheduling.run(QueuedPodInfo(pod, self.clock.now()))
        self.partial_groups_seen.append(self.waiting_groups())
        while self._binding_tasks:
            tg.start_soon(self._bind, self._binding_tasks.pop(0))
        await self.settle()
        if pod.name in self.bound:
            return "bound"
        if any(wp.pod.uid == pod.uid for wp in self.fwk.waiting_pods):
            return "waiting"
        return self._failure_since(before, pod)

    async def _bind(self, a: Assumed) -> None:
        await self.binding.run(a)

    async def settle(self) -> None:
        """Run every task until it blocks (on Permit, or the FakeClock)."""
        # anyio's wait_all_tasks_blocked sleeps 0.1 s of real time whenever a task is
        # still runnable; a few checkpoints first let new binding tasks reach their wait.
        for _ in range(8):
            await anyio.lowlevel.checkpoint()
        await anyio.wait_all_tasks_blocked()

    def _failure_since(self, before: int, pod: Pod) -> str:
        for regarding, _, reason, _, message in self.events.recorded[before:]:
            if reason == "FailedScheduling" and getattr(regarding, "uid", None) == pod.uid:
                return message
        return "no outcome"

    def failed_scheduling(self, pod_name: str) -> list[str]:
        """Every FailedScheduling message *pod_name* got, in order."""
        return [
            message
            for regarding, _, reason, _, message in self.events.recorded
            if reason == "FailedScheduling" and getattr(regarding, "name", None) == pod_name
        ]

    def group_events(self) -> list[tuple[Any, str, str, str, str]]:
        """Events about PodGroups (not pods)."""
        return [e for e in self.events.recorded if not isinstance(e[0], Pod)]
