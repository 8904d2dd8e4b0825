"""Read-only scheduler services for one dry scheduling cycle (`asched explain`).

A profile's Framework expects a scheduler around it: a clock, an API client, an event
recorder, the cycle's snapshot, informer stores, the pods of a namespace and the
nominated pods. explain has no scheduler; it lists the cluster once. ExplainServices
answers those questions from that one listing, and guarantees the dry cycle cannot change
the cluster:
- the client plugins get refuses every request but GET (and binding outright);
- events are kept in memory, never sent;
- activate() (a scheduling-queue operation) does nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from asched.api import Pod
from asched.base.clock import Clock, RealClock
from asched.client.protocol import KubeClient
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.services import RuntimeMetrics
from asched.informers import Store


class ReadOnlyError(RuntimeError):
    """Something tried to change the cluster during a dry run (a plugin bug)."""


class ReadOnlyClient:
    """A KubeClient that passes reads through and refuses every write."""

    def __init__(self, inner: KubeClient) -> None:
        self._inner = inner

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        if method.upper() != "GET":
            raise ReadOnlyError(f"dry run: refused {method} {path}")
        return await self._inner.request("GET", path, params=params)

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        return self._inner.stream_lines(path, params)

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise ReadOnlyError(f"dry run: refused to bind {namespace}/{name} to {node}")

    async def close(self) -> None:
        """The owner of the wrapped client closes it."""


@dataclass(frozen=True, slots=True)
class HeldEvent:
    """An event a plugin asked to record during the dry run; shown, never sent."""

    regarding: str
    event_type: str
    reason: str
    message: str


class HeldEvents:
    """An EventRecorder that keeps events in memory."""

    def __init__(self) -> None:
        self.events: list[HeldEvent] = []

    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        ns = getattr(regarding, "namespace", "")
        name = getattr(regarding, "name", "")
        who = f"{ns}/{name}" if ns else str(name)
        self.events.append(HeldEvent(who, event_type, reason, message))


class ExplainServices:
    """SchedulerServices over one listing of the cluster (see the module docstring).

    `store()` hands out an empty Store per resource at once, because plugins may ask for
    theirs while they are being constructed; the caller fills every store named in
    `requests` before running the cycle.
    """

    def __init__(
        self,
        client: KubeClient,
        snapshot: SnapshotLister,
        pods: Sequence[Pod],
        *,
        clock: Clock | None = None,
        parallelism: int = 16,
    ) -> None:
        self.client: KubeClient = ReadOnlyClient(client)
        self.snapshot = snapshot
        self.clock: Clock = clock or RealClock()
        self.parallelism = parallelism
        self.metrics: RuntimeMetrics | None = None
        self.held = HeldEvents()
        self.events = self.held
        self.requests: dict[str, InformerRequest[Any]] = {}
        self.stores: dict[str, Store[Any]] = {}
        self._by_namespace: dict[str, list[Pod]] = {}
        self._nominated: dict[str, list[Pod]] = {}
        for p in pods:
            self._by_namespace.setdefault(p.namespace, []).append(p)
            # kube-scheduler's nominator holds unassigned pods that preemption nominated.
            if p.nominated_node_name and not p.node_name:
                self._nominated.setdefault(p.nominated_node_name, []).append(p)

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        store = self.stores.get(request.resource)
        if store is None:
            store = self.stores[request.resource] = Store()
            self.requests[request.resource] = request
        return store

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self._by_namespace.get(namespace, [])

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._nominated.get(node_name, [])

    def has_nominated_pods(self) -> bool:
        return bool(self._nominated)

    def activate(self, pods: Sequence[Pod]) -> None:
        """A queue operation: there is no queue in a dry run."""
