"""Test doubles for plugin unit tests: a Snapshot, a KubeClient and a Handle.

They implement only what plugins use; everything else raises so a test that strays
outside it fails loudly instead of passing on a silent default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from asched.api import Node, Pod
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError
from asched.framework.cycle_state import CycleState
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status
from asched.framework.waiting import WaitingPods


def node_info(node: Node, *pods: Pod) -> NodeInfo:
    ni = NodeInfo(node)
    for pod in pods:
        ni.add_pod(pod)
    return ni


class Snapshot:
    """A fixed list of NodeInfos, as the cycle's SnapshotLister."""

    def __init__(self, node_infos: Sequence[NodeInfo] = ()) -> None:
        self._list = list(node_infos)
        self._map = {ni.name: ni for ni in self._list}

    def node_infos(self) -> Sequence[NodeInfo]:
        return self._list

    def get(self, node_name: str) -> NodeInfo | None:
        return self._map.get(node_name)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return [ni for ni in self._list if ni.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return [ni for ni in self._list if ni.pods_with_required_anti_affinity]

    def num_nodes(self) -> int:
        return len(self._list)


class FakeClient:
    """Records bindings; `fail_with` makes the next binds raise it."""

    def __init__(self) -> None:
        self.bindings: list[tuple[str, str, str, str]] = []
        self.fail_with: ApiError | None = None

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.bindings.append((namespace, name, uid, node))

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        raise NotImplementedError("FakeClient.request")

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        raise NotImplementedError("FakeClient.stream_lines")

    async def close(self) -> None:
        return None


class FakeEvents:
    def __init__(self) -> None:
        self.recorded: list[tuple[Any, str, str, str, str]] = []

    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        self.recorded.append((regarding, event_type, reason, action, message))


class FakeHandle:
    def __init__(
        self, node_infos: Sequence[NodeInfo] = (), client: FakeClient | None = None
    ) -> None:
        self._snapshot = Snapshot(node_infos)
        self._client = client or FakeClient()
        self._clock = FakeClock()
        self._waiting = WaitingPods()
        self._events = FakeEvents()
        self.activated: list[Pod] = []

    @property
    def profile_name(self) -> str:
        return "default-scheduler"

    @property
    def clock(self) -> FakeClock:
        return self._clock

    @property
    def client(self) -> FakeClient:
        return self._client

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def waiting_pods(self) -> WaitingPods:
        return self._waiting

    @property
    def events(self) -> FakeEvents:
        return self._events

    @property
    def parallelism(self) -> int:
        return 16

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        raise NotImplementedError("FakeHandle.store")

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return [
            p for ni in self._snapshot.node_infos() for p in ni.pods if p.namespace == namespace
        ]

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return []

    def activate(self, pods: Sequence[Pod]) -> None:
        self.activated.extend(pods)

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        raise NotImplementedError("FakeHandle.run_filter_plugins_with_nominated_pods")

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        raise NotImplementedError("FakeHandle.run_pre_filter_extension_add_pod")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        raise NotImplementedError("FakeHandle.run_pre_filter_extension_remove_pod")
