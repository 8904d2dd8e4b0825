"""Every pod of the cluster as the executor needs to see it: scheduled, attempted, labels.

scheduler_perf reads one pod informer for its barriers, its throughput collector and its
steady-state pod churn. This is that informer: one list and one watch of all pods, kept as
small records. Listeners registered with `on_scheduled` are called (synchronously,
on the event loop) once per pod when it is first seen with spec.nodeName set, as the
informer's add/update handlers of util.go throughputCollector and createPodsSteadily are.
The list/watch loop is benchmarks/watchloop.py, shared with the side-by-side observer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio

from asched.localcluster import ClusterClient, JsonObject
from benchmarks.watchloop import list_and_watch

PODS = "/api/v1/pods"


@dataclass(slots=True)
class PodRecord:
    namespace: str
    name: str
    labels: Mapping[str, str]
    node: str
    #: Has a PodScheduled condition (util.go isAttempted).
    attempted: bool


def labels_match(labels: Mapping[str, str], selector: Mapping[str, str]) -> bool:
    """util.go labelsMatch: every selector pair is among the labels."""
    return all(labels.get(k) == v for k, v in selector.items())


ScheduledListener = Callable[[PodRecord], None]


class PodStore:
    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self.pods: dict[tuple[str, str], PodRecord] = {}
        self._listeners: list[ScheduledListener] = []
        self._synced = anyio.Event()

    def on_scheduled(self, listener: ScheduledListener) -> Callable[[], None]:
        """Call *listener* for every pod that becomes scheduled from now on; returns a
        function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def wait_synced(self) -> None:
        await self._synced.wait()

    def census(
        self, namespace: str, selector: Mapping[str, str]
    ) -> tuple[list[PodRecord], list[PodRecord], list[PodRecord]]:
        """util.go getScheduledPods: (scheduled, attempted, unattempted) pods of *namespace*."""
        scheduled: list[PodRecord] = []
        attempted: list[PodRecord] = []
        unattempted: list[PodRecord] = []
        for pod in self.pods.values():
            if pod.namespace != namespace or not labels_match(pod.labels, selector):
                continue
            if pod.node:
                scheduled.append(pod)
            elif pod.attempted:
                attempted.append(pod)
            else:
                unattempted.append(pod)
        return scheduled, attempted, unattempted

    def _see(self, obj: JsonObject) -> None:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        spec = obj.get("spec") or {}
        conditions = (obj.get("status") or {}).get("conditions") or []
        record = PodRecord(
            namespace=key[0],
            name=key[1],
            labels=meta.get("labels") or {},
            node=spec.get("nodeName") or "",
            attempted=any(c.get("type") == "PodScheduled" for c in conditions),
        )
        old = self.pods.get(key)
        self.pods[key] = record
        if record.node and (old is None or not old.node):
            for listener in list(self._listeners):
                listener(record)

    def _forget(self, obj: JsonObject) -> None:
        meta = obj["metadata"]
        self.pods.pop((meta.get("namespace", ""), meta["name"]), None)

    async def run(self) -> None:
        def listed(items: Sequence[JsonObject]) -> None:
            self.pods.clear()
            for pod in items:
                self._see(pod)
            self._synced.set()

        def changed(kind: str, obj: JsonObject) -> None:
            if kind in ("ADDED", "MODIFIED"):
                self._see(obj)
            elif kind == "DELETED":
                self._forget(obj)

        await list_and_watch(self._client, PODS, on_list=listed, on_event=changed)
