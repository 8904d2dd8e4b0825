"""The inspector's view of a running scheduler, as one JSON-ready dict per tick.

`Inspector.run` ticks every `interval` seconds: it samples the queue depths into a ring
(the chart of the last minutes), lets the Collector format the decisions the cycles
recorded, and, only while a browser listens, builds the full snapshot, serialises it once
and publishes it (asched.inspector.stream coalesces it per client). Everything here runs
on the event loop between cycles and is bounded: the pending list and the node list are
capped (with the totals given), the rings have fixed sizes.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

import anyio
import orjson

from asched.api import Pod
from asched.framework.nodeinfo import NodeInfo
from asched.inspector.collector import Collector, Decision, Rejection
from asched.inspector.stream import Broadcaster
from asched.scheduler.views import PendingPod, SchedulerView

DEFAULT_INTERVAL = 1.0
HISTORY_SECONDS = 300.0
MAX_PENDING = 200
MAX_NODES = 2000
# Decisions formatted between two yields to the event loop (tens of microseconds each).
DRAIN_BUDGET = 16
ZONE_LABEL = "topology.kubernetes.io/zone"
GPU = "nvidia.com/gpu"
QUEUES = ("active", "backoff", "unschedulable", "gated")
# How often `tick` drops the rejections of pods that are no longer pending (bound or
# deleted) when no browser listens. Without it they stayed until the Collector's cap
# (5000): the soak's mixed churn leaves one unschedulable pod a second, each deleted a
# second later under a new name, and asched kept its rejection (nodes rejected per
# plugin, the FailedScheduling message) for 83 minutes, growing all the while
# (benchmarks.memtrace; docs/benchmarks.md). Once per PRUNE_EVERY and only when there are
# more rejections than pending pods: the pass reads every pending pod.
PRUNE_EVERY = 10.0


class Inspector:
    def __init__(
        self,
        sched: SchedulerView,
        collector: Collector,
        broadcaster: Broadcaster,
        *,
        loop_lag_p99: Callable[[], float] = lambda: 0.0,
        interval: float = DEFAULT_INTERVAL,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._sched = sched
        self.collector = collector
        self.broadcaster = broadcaster
        self._lag = loop_lag_p99
        self._interval = interval
        self._wall = wall
        self._queues: deque[tuple[float, int, int, int, int]] = deque(
            maxlen=max(1, int(HISTORY_SECONDS / interval))
        )
        self._last_binds = (wall(), 0)
        self._binds_per_second = 0.0
        self._next_prune = wall() + PRUNE_EVERY

    async def run(self) -> NoReturn:
        while True:
            # The recorded decisions are formatted a few at a time, yielding in between,
            # so the scheduling loop is never held for more than a millisecond or so.
            while self.collector.drain(DRAIN_BUDGET):
                await anyio.lowlevel.checkpoint()
            self.tick()
            await anyio.sleep(self._interval)

    def tick(self) -> None:
        now = self._wall()
        counts = self._sched.queue.pending_counts()
        self._queues.append((now, *(int(counts.get(q, 0)) for q in QUEUES)))  # type: ignore[arg-type]
        then, binds_then = self._last_binds
        binds = self.collector.binds
        if now > then:
            self._binds_per_second = (binds - binds_then) / (now - then)
        self._last_binds = (now, binds)
        self.collector.drain()
        if self.broadcaster.clients:
            # snapshot() drops the rejections of pods gone from the queue itself.
            self.broadcaster.publish(self.encoded())
        elif now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY
            if len(self.collector.rejections) > sum(counts.values()):
                self.collector.forget_rejections(q.key for q in self._sched.queue.pending())

    def encoded(self) -> bytes:
        return orjson.dumps(self.snapshot())

    def snapshot(self) -> dict[str, Any]:
        sched = self._sched
        pending = sched.queue.pending()
        self.collector.forget_rejections(q.key for q in pending)
        # The cache's live node infos, read only (the cycle's snapshot may be mid-cycle).
        cache = sched.cache
        names = cache.node_names()
        nodes = [ni for n in names[:MAX_NODES] if (ni := cache.node_info(n)) is not None]
        return {
            "at": self._wall(),
            "ready": sched.ready,
            "queues": {
                "names": list(QUEUES),
                "samples": [list(s) for s in self._queues],
            },
            "pending": self._pending(pending),
            "pendingTotal": len(pending),
            "decisions": [_decision(d) for d in reversed(self.collector.decisions)],
            "gangs": self._gangs(),
            "nodes": [_node(ni) for ni in nodes if ni.node is not None],
            "nodesTotal": len(names),
            "throughput": {
                "bindsPerSecond": round(self._binds_per_second, 2),
                "binds": self.collector.binds,
                "loopLagP99": self._lag(),
                "bindLatencyP50": self.collector.bind_latency(0.5),
                "bindLatencyP99": self.collector.bind_latency(0.99),
            },
        }

    def _pending(self, pending: Sequence[PendingPod]) -> list[dict[str, Any]]:
        now = self._sched.now()
        rejections = self.collector.rejections
        return [
            {
                "pod": q.key,
                "queue": q.queue,
                "age": round(now - q.since, 1),
                "attempts": q.attempts,
                "gatedBy": q.gated_by,
                "rejection": _rejection(rejections.get(q.key)),
            }
            for q in pending[:MAX_PENDING]
        ]

    def _gangs(self) -> list[dict[str, Any]]:
        """Every gang the profiles' gang plugins report (GangView)."""
        return [
            {
                "kind": g.api_group,
                "name": g.key,
                "minMember": g.min_member,
                **self._census(g.members),
                "state": g.state,
                "timeoutSeconds": g.timeout_seconds,
            }
            for g in self._sched.gangs()
        ]

    def _census(self, members: Iterable[Pod]) -> dict[str, int]:
        cache = self._sched.cache
        created = assumed = bound = 0
        for p in members:
            created += 1
            # Assumed first: a gang plugin may report an assumed member with its node.
            if cache.is_assumed(p.uid):
                assumed += 1
            elif p.node_name:
                bound += 1
        return {"created": created, "assumed": assumed, "bound": bound}


def _decision(d: Decision) -> dict[str, Any]:
    return {
        "at": d.at,
        "pod": d.pod,
        "profile": d.profile,
        "node": d.node,
        "cycleMs": round(d.cycle_seconds * 1e3, 2),
        "group": d.group,
        "hinted": d.hinted,
        "weights": d.weights,
        "scored": [
            {
                "node": s.node,
                "total": s.total,
                "plugins": {
                    name: [p.raw, p.normalized, p.weighted] for name, p in s.plugins.items()
                },
            }
            for s in d.scored
        ],
    }


def _rejection(r: Rejection | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "at": r.at,
        "profile": r.profile,
        "nodes": r.nodes,
        "plugins": r.plugins,
        "message": r.message,
    }


def _fraction(used: int, total: int) -> float | None:
    return None if total <= 0 else round(min(used / total, 1.0), 3)


def _node(ni: NodeInfo) -> dict[str, Any]:
    labels = ni.node.labels if ni.node is not None else {}
    a, r = ni.allocatable, ni.requested
    return {
        "name": ni.name,
        "zone": labels.get(ZONE_LABEL, ""),
        "cpu": _fraction(r.milli_cpu, a.milli_cpu),
        "memory": _fraction(r.memory, a.memory),
        "gpu": _fraction(r.scalar.get(GPU, 0), a.scalar.get(GPU, 0)),
        "pods": len(ni.pods),
    }
