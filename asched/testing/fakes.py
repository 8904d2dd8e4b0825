"""Test doubles for calling a plugin's methods directly: a Handle, a KubeClient, events.

`FakeHandle` implements asched.framework.Handle over fixed NodeInfos, so a plugin can be
built as `MyPlugin(args, FakeHandle([node_info(node, *pods)]))` with no scheduler around
it. Whatever a plugin may not use outside a real cycle (the API beyond binding, running
other plugins) raises NotImplementedError, so a test that strays there fails loudly
instead of passing on a silent default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

import anyio.lowlevel

from asched.api import Node, Pod
from asched.api.podgroup import pod_group_name
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError
from asched.framework.cycle_state import CycleState
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.prebinding import PodsInPreBind
from asched.framework.status import Status
from asched.framework.waiting import WaitingPods
from asched.informers import Store


def node_info(node: Node, *pods: Pod) -> NodeInfo:
    """A NodeInfo for `node` with `pods` counted on it (their nodeName is not checked)."""
    ni = NodeInfo(node)
    for pod in pods:
        ni.add_pod(pod)
    return ni


async def wait_for(cond: Callable[[], bool], steps: int = 100) -> None:
    """Let other tasks run until `cond()` holds (a task reaching its next FakeClock sleep,
    say); fails after `steps` scheduling rounds. No time passes."""
    for _ in range(steps):
        if cond():
            return
        await anyio.lowlevel.checkpoint()
    raise AssertionError("condition never held")


def filled_store(objects: Iterable[Any]) -> Store[Any]:
    """A synced informer Store holding `objects`, keyed `namespace/name` (or `name`)."""
    store: Store[Any] = Store()
    for obj in objects:
        ns = getattr(obj, "namespace", "")
        store.upsert(f"{ns}/{obj.name}" if ns else str(obj.name), obj, "1")
    store.mark_synced()
    return store


class FakeSnapshot:
    """The cycle's SnapshotLister over fixed NodeInfos.

    The affinity lists are computed on each call, not once, so a test may add pods to a
    NodeInfo after building the handle.
    """

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
    """A KubeClient that records bindings; `fail_with` makes the next binds raise it."""

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


class RecordingClient(FakeClient):
    """Records `request()` calls as (method, path, body, content type) and answers `{}`;
    `errors` are raised by the next requests, in order (status patches, PV/PVC writes)."""

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


class FakeEvents:
    """An EventRecorder that keeps what plugins record, for assertions."""

    def __init__(self) -> None:
        self.recorded: list[tuple[Any, str, str, str, str]] = []

    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        self.recorded.append((regarding, event_type, reason, action, message))


class FakeHandle:
    """asched.framework.Handle for one plugin under test.

    `pods_in_namespace` and `pods_in_group` see the pods counted on `node_infos` (the
    informer view of a cluster with nothing pending); `stores` serves informer caches by
    InformerRequest.resource, each holding the given objects; `activated` collects the
    pods a plugin asked to move to the active queue.
    """

    def __init__(
        self,
        node_infos: Sequence[NodeInfo] = (),
        client: FakeClient | None = None,
        *,
        clock: FakeClock | None = None,
        stores: Mapping[str, Iterable[Any]] | None = None,
        profile_name: str = "default-scheduler",
    ) -> None:
        self._snapshot = FakeSnapshot(node_infos)
        self._client = client or FakeClient()
        self._clock = clock or FakeClock()
        self._waiting = WaitingPods()
        self._pre_bind = PodsInPreBind()
        self._events = FakeEvents()
        self._stores = {k: filled_store(v) for k, v in (stores or {}).items()}
        self._profile_name = profile_name
        self.activated: list[Pod] = []

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> FakeClock:
        return self._clock

    @property
    def client(self) -> FakeClient:
        return self._client

    @property
    def snapshot(self) -> FakeSnapshot:
        return self._snapshot

    @property
    def waiting_pods(self) -> WaitingPods:
        return self._waiting

    @property
    def pods_in_pre_bind(self) -> PodsInPreBind:
        return self._pre_bind

    @property
    def events(self) -> FakeEvents:
        return self._events

    @property
    def parallelism(self) -> int:
        return 16

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        store = self._stores.get(request.resource)
        if store is None and request.optional:
            # An optional informer of an API group the cluster does not serve: empty.
            store = self._stores[request.resource] = filled_store(())
        if store is None:
            raise NotImplementedError(
                f"FakeHandle.store: no store for {request.resource} (pass stores=...)"
            )
        return store

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return [
            p for ni in self._snapshot.node_infos() for p in ni.pods if p.namespace == namespace
        ]

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.pods_in_namespace(namespace) if pod_group_name(p) == name]

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.pods_in_namespace(namespace) if p.scheduling_group == name]

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        return len(self.pods_in_scheduling_group(namespace, name))

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        return sum(1 for p in self.pods_in_scheduling_group(namespace, name) if p.node_name)

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return []

    def activate(self, pods: Sequence[Pod]) -> None:
        self.activated.extend(pods)

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        raise NotImplementedError(
            "FakeHandle.run_filter_plugins_with_nominated_pods: use asched.testing.Runner"
        )

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        raise NotImplementedError(
            "FakeHandle.run_pre_filter_extension_add_pod: use asched.testing.Runner"
        )

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        raise NotImplementedError(
            "FakeHandle.run_pre_filter_extension_remove_pod: use asched.testing.Runner"
        )
