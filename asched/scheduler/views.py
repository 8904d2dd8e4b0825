"""Read-only views of a running scheduler, for tools that watch it (the inspector).

A tool gets a `SchedulerView`, never the Scheduler: what it may read is written down here
(queue depths, the pending pods, a cache summary, pod lookups in the informer, the gangs
the gang plugins report) and nothing it holds can move a pod. Every method runs on the
event loop between cycles and returns copies or values, except `node_info`, whose
NodeInfo is the cache's live one and must only be read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from asched.api import Pod
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.base.clock import Clock
from asched.framework.interfaces import GangView
from asched.framework.listers import ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import GangSummary
from asched.framework.runtime import Framework


@dataclass(slots=True, frozen=True)
class PendingPod:
    """A pod waiting in the queue: which queue, since when (the clock's seconds of its
    first attempt, or of its arrival), how many attempts, and the PreEnqueue plugin that
    gates it ("" when none)."""

    key: str
    uid: str
    queue: str
    since: float
    attempts: int
    gated_by: str


class QueueView(Protocol):
    def pending_counts(self) -> Mapping[str, int]:
        """Pods per queue: active, backoff, unschedulable, gated."""
        ...

    def pending(self) -> Sequence[PendingPod]:
        """Every queued pod, oldest first. One pass over the queue."""
        ...


class CacheView(Protocol):
    def node_names(self) -> Sequence[str]:
        """The cache's nodes, in its order."""
        ...

    def node_info(self, name: str) -> NodeInfo | None:
        """The cache's live NodeInfo of a node: read it, never change it."""
        ...

    def is_assumed(self, uid: str) -> bool:
        """Whether the pod is assumed on a node and not yet seen bound."""
        ...


class SchedulerView(Protocol):
    @property
    def ready(self) -> bool:
        """Whether the informers have synced."""
        ...

    @property
    def queue(self) -> QueueView: ...

    @property
    def cache(self) -> CacheView: ...

    def now(self) -> float:
        """The scheduler's clock (PendingPod.since is on it)."""
        ...

    def pod(self, key: str) -> Pod | None:
        """The pod informer's copy of `namespace/name`."""
        ...

    def gangs(self) -> Sequence[GangSummary]:
        """Every gang the profiles' GangView plugins report, one per API group and key."""
        ...


class _Queue:
    def __init__(self, queue: SchedulingQueue) -> None:
        self._queue = queue

    def pending_counts(self) -> Mapping[str, int]:
        return self._queue.pending_counts()

    def pending(self) -> Sequence[PendingPod]:
        where = self._queue.where
        infos = sorted(self._queue.pending_infos(), key=lambda q: q.timestamp)
        return [
            PendingPod(
                key=q.pod.key,
                uid=q.uid,
                queue=where(q.uid) or "",
                since=q.initial_attempt_timestamp or q.timestamp,
                attempts=q.attempts,
                gated_by=q.gating_plugin,
            )
            for q in infos
        ]


class _Cache:
    def __init__(self, cache: Cache) -> None:
        self._cache = cache

    def node_names(self) -> Sequence[str]:
        return self._cache.node_names()

    def node_info(self, name: str) -> NodeInfo | None:
        return self._cache.get_node_info(name)

    def is_assumed(self, uid: str) -> bool:
        return self._cache.is_assumed(uid)


class Views:
    """The SchedulerView of one scheduler's components."""

    def __init__(
        self,
        *,
        queue: SchedulingQueue,
        cache: Cache,
        pods: ObjectStore[Pod],
        frameworks: Mapping[str, Framework],
        clock: Clock,
        ready: Callable[[], bool],
    ) -> None:
        self._queue = _Queue(queue)
        self._cache = _Cache(cache)
        self._pods = pods
        self._clock = clock
        self._ready = ready
        # The gang plugins of every profile, found once (a profile's plugins are fixed).
        self._gang_views = [
            p
            for fwk in frameworks.values()
            for p in fwk.plugins.values()
            if isinstance(p, GangView)
        ]

    @property
    def ready(self) -> bool:
        return self._ready()

    @property
    def queue(self) -> QueueView:
        return self._queue

    @property
    def cache(self) -> CacheView:
        return self._cache

    def now(self) -> float:
        return self._clock.now()

    def pod(self, key: str) -> Pod | None:
        return self._pods.get(key)

    def gangs(self) -> Sequence[GangSummary]:
        seen: set[tuple[str, str]] = set()
        out: list[GangSummary] = []
        for view in self._gang_views:
            for g in view.gangs():
                if (g.api_group, g.key) not in seen:
                    seen.add((g.api_group, g.key))
                    out.append(g)
        return out
