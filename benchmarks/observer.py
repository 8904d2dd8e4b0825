"""Watches a run's pods and records when each one is bound, as the API server reports it.

The bind time of a pod is the wall time the benchmark receives the first watch event that
shows it with spec.nodeName set (the Binding sets nodeName and the PodScheduled condition
in one write). Watching is one stream for the whole namespace, so observing costs the API
server the same for both schedulers and nothing is polled. The watch resumes from the last
resourceVersion when the server closes it or goes away, and relists on 410 Gone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import aiohttp
import anyio
import structlog

from asched.localcluster import ApiError, ClusterClient, JsonObject
from asched.localcluster.rest import TransportError

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Binding:
    node: str
    at: float  # wall time the bind was observed


@dataclass(slots=True)
class BindObserver:
    """Call run() in a task group; wait on done() or read `bound` at any time."""

    client: ClusterClient
    namespace: str
    expected: int
    bound: dict[str, Binding] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    last_change: float = field(default_factory=time.time)
    #: Pods seen on a second node after their first (name -> every node seen): a double
    #: binding, as long as pod names are not reused within the namespace.
    rebound: dict[str, list[str]] = field(default_factory=dict)
    _done: anyio.Event = field(default_factory=anyio.Event)
    _synced: anyio.Event = field(default_factory=anyio.Event)
    # (count, event): set once that many pods are bound (wait_bound).
    _waiters: list[tuple[int, anyio.Event]] = field(default_factory=list)

    async def wait_synced(self) -> None:
        await self._synced.wait()

    async def wait_bound(self, count: int) -> None:
        """Return once at least `count` pods are bound."""
        if len(self.bound) >= count:
            return
        event = anyio.Event()
        self._waiters.append((count, event))
        await event.wait()

    async def done(self) -> None:
        await self._done.wait()

    def _see(self, pod: JsonObject, at: float) -> None:
        meta = pod["metadata"]
        name = meta["name"]
        if name not in self.labels:
            self.labels[name] = meta.get("labels") or {}
        node = (pod.get("spec") or {}).get("nodeName")
        first = self.bound.get(name)
        if node and first is not None and node != first.node:
            seen = self.rebound.setdefault(name, [first.node])
            if node not in seen:
                seen.append(node)
        if node and first is None:
            self.bound[name] = Binding(node, at)
            self.last_change = at
            if len(self.bound) >= self.expected:
                self._done.set()
            for count, event in self._waiters:
                if len(self.bound) >= count:
                    event.set()

    async def run(self) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        version = ""
        while True:
            try:
                if not version:
                    items, version = await self.client.list_with_version(path)
                    now = time.time()
                    for pod in items:
                        self._see(pod, now)
                    self._synced.set()
                async with self.client.watch(
                    path,
                    resource_version=version,
                    params={"timeoutSeconds": 300, "allowWatchBookmarks": True},
                ) as events:
                    async for event in events:
                        obj = event["object"]
                        version = obj["metadata"].get("resourceVersion", version)
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self._see(obj, time.time())
            except ApiError as err:
                if err.status == 410:
                    log.info("watch_expired_relisting", namespace=self.namespace)
                    version = ""
                    continue
                if err.status < 500:
                    raise
                # A restarting API server answers 5xx until it is ready: wait and resume.
                log.info("watch_refused_resuming", namespace=self.namespace, status=err.status)
                await anyio.sleep(0.2)
            except (TransportError, aiohttp.ClientError, OSError, TimeoutError) as err:
                # The API server went away (the faults scenario restarts it): resume from
                # the last version once it answers again, relisting if that is gone.
                log.info("watch_lost_resuming", namespace=self.namespace, error=str(err))
                await anyio.sleep(0.2)
