"""Doubles for the Coscheduling tests: a handle with an informer view and a PodGroup store,
a client that records PATCHes, and `Sim`, a small copy of the scheduler's cycles.

`Sim.attempt(pod)` runs the scheduling cycle the way asched.scheduler.cycle does -
PreFilter, a cpu/pod-count Filter, PostFilter when nothing fits, assume, Reserve, Permit -
and parks waiting pods in binding tasks that wait on Permit, then "bind" or Unreserve and
forget. Tests drive it with a FakeClock and read outcomes, never timings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anyio
import anyio.abc

from asched.api import Node, Pod
from asched.api.podgroup import PodGroup, pod_group_name
from asched.client.protocol import ApiError
from asched.framework.cycle_state import CycleState
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.framework.types import NodeToStatus, QueuedPodInfo
from asched.framework.waiting import WaitingPod
from asched.plugins.coscheduling import NAME, PODGROUP_INFORMER, Coscheduling, CoschedulingArgs
from tests.unit.plugins.fakes import FakeClient, FakeHandle
from tests.unit.plugins.fakes_pods import FakeStore


class GroupStore(FakeStore):
    """The PodGroup informer's store, which tests change as the API would."""

    def put(self, pg: PodGroup) -> None:
        self._objects[pg.key] = pg

    def delete(self, key: str) -> None:
        self._objects.pop(key, None)


class RecordingClient(FakeClient):
    """Records `request()` calls; `errors` are raised by the next requests, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str, Any, str]] = []
        self.errors: list[Exception] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        await anyio.lowlevel.checkpoint()
        if self.errors:
            raise self.errors.pop(0)
        self.requests.append((method, path, body, content_type))
        return {}


def not_found() -> ApiError:
    return ApiError(404, "NotFound", "podgroups not found")


class GangHandle(FakeHandle):
    """FakeHandle with an informer view of every pod (assigned or not) and PodGroups."""

    def __init__(self, nodes: Iterable[Node] = (), groups: Iterable[PodGroup] = ()) -> None:
        self.infos = {n.name: NodeInfo(n) for n in nodes}
        super().__init__(list(self.infos.values()), RecordingClient())
        self.pods: dict[str, Pod] = {}
        self.groups = GroupStore(groups)

    @property
    def client(self) -> RecordingClient:
        client = self._client
        assert isinstance(client, RecordingClient)
        return client

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        assert request.resource == PODGROUP_INFORMER.resource
        return self.groups

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return [p for p in self.pods.values() if p.namespace == namespace]

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.pods_in_namespace(namespace) if pod_group_name(p) == name]

    def add(self, *pods: Pod) -> None:
        """Pods the informer has seen; assigned ones are also counted on their node."""
        for p in pods:
            self.pods[p.uid] = p
            if p.node_name:
                self.infos[p.node_name].add_pod(p)

    def remove(self, pod: Pod) -> None:
        old = self.pods.pop(pod.uid, None)
        if old is not None and old.node_name:
            self.infos[old.node_name].remove_pod(old)

    def activated_names(self) -> list[str]:
        return sorted({p.name for p in self.activated})


def plugin_for(handle: GangHandle, **args: int) -> Coscheduling:
    return Coscheduling(CoschedulingArgs(**args), handle)


def qpi(pod: Pod, timestamp: float = 0.0) -> QueuedPodInfo:
    return QueuedPodInfo(pod, timestamp)


class Sim:
    """The scheduler's two cycles, reduced to what gang scheduling exercises."""

    def __init__(self, handle: GangHandle, plugin: Coscheduling, tg: anyio.abc.TaskGroup) -> None:
        self.h = handle
        self.pl = plugin
        self._tg = tg
        self.bound: dict[str, str] = {}  # pod name -> node
        self.outcomes: dict[str, list[str]] = {}
        # Groups with members parked at Permit, sampled at every Permit: the gate's invariant.
        self.partial_groups_seen: list[set[str]] = []

    def _note(self, pod: Pod, outcome: str) -> str:
        self.outcomes.setdefault(pod.name, []).append(outcome)
        return outcome

    def _fits(self, pod: Pod, ni: NodeInfo) -> bool:
        alloc = ni.allocatable
        return (
            ni.requested.milli_cpu + pod.requests.milli_cpu <= alloc.milli_cpu
            and len(ni.pods) < alloc.allowed_pods
        )

    async def attempt(self, pod: Pod) -> str:
        """One scheduling cycle; returns the outcome ("waiting", "bound", "<Code>: msg")."""
        pod = self.h.pods.get(pod.uid, pod)
        st = self.pl.pre_enqueue(pod)
        if st is not None:
            return self._note(pod, f"gated: {st.message()}")
        state = CycleState()
        nodes = list(self.h.infos.values())
        _, st = self.pl.pre_filter(state, pod, nodes)
        statuses = NodeToStatus()
        feasible: list[NodeInfo] = []
        if st is not None:
            statuses.absent = st
        else:
            for ni in nodes:
                if self._fits(pod, ni):
                    feasible.append(ni)
                else:
                    statuses.set(ni.name, Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)))
        if not feasible:
            _, pst = await self.pl.post_filter(state, pod, statuses)
            code = st.code_name() if st is not None else "Unschedulable"
            msg = st.message() if st is not None else (pst.message() if pst else "")
            return self._note(pod, f"{code}: {msg}")
        node = feasible[0].name
        assumed = dataclasses.replace(pod, node_name=node)
        self.h.remove(pod)
        self.h.add(assumed)
        self.pl.reserve(state, assumed, node)
        pst, timeout = self.pl.permit(state, assumed, node)
        self.partial_groups_seen.append(self.waiting_groups())
        if pst is not None and pst.code == Code.WAIT:
            wp = WaitingPod(assumed, node, {NAME: timeout}, self.h.clock.now())
            self.h.waiting_pods.add(wp)
            self.partial_groups_seen[-1] = self.waiting_groups()
            self._tg.start_soon(self._binding_cycle, state, wp, pod)
            return self._note(pod, "waiting")
        if pst is not None:
            self._forget(state, assumed, pod)
            return self._note(pod, f"{pst.code_name()}: {pst.message()}")
        await self._bind(state, assumed)
        return self._note(pod, "bound")

    def waiting_groups(self) -> set[str]:
        return {
            wp.pod.labels.get("scheduling.x-k8s.io/pod-group", "")
            for wp in self.h.waiting_pods
            if not wp.decided
        }

    async def _binding_cycle(self, state: CycleState, wp: WaitingPod, original: Pod) -> None:
        st = await wp.wait(self.h.clock)
        self.h.waiting_pods.remove(wp.pod.uid)
        if st.is_success():
            await self._bind(state, wp.pod)
            self._note(original, "bound")
        else:
            self._forget(state, wp.pod, original)
            self._note(original, f"rejected: {st.message()}")

    async def _bind(self, state: CycleState, assumed: Pod) -> None:
        self.bound[assumed.name] = assumed.node_name
        await self.pl.post_bind(state, assumed, assumed.node_name)

    def _forget(self, state: CycleState, assumed: Pod, original: Pod) -> None:
        self.pl.unreserve(state, assumed, assumed.node_name)
        self.h.remove(assumed)
        self.h.add(original)

    async def settle(self) -> None:
        await anyio.wait_all_tasks_blocked()
