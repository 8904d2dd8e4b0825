"""Test doubles for plugins that look at other pods (PodTopologySpread, InterPodAffinity).

`cluster()` builds NodeInfos from nodes and assigned pods; `StoreHandle` is the shared
FakeHandle plus in-memory object stores for the informers a plugin asks for.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from asched.api import Node, Pod
from asched.backend.snapshot import Snapshot
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from tests.unit.plugins.fakes import FakeHandle


def cluster(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> list[NodeInfo]:
    """One NodeInfo per node, with every pod added to the node named by its nodeName."""
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in pods:
        infos[p.node_name].add_pod(p)
    return list(infos.values())


class FakeStore:
    """An ObjectStore over a fixed list, keyed `namespace/name` (or `name`)."""

    def __init__(self, objects: Iterable[Any] = ()) -> None:
        self._objects = {self._key(o): o for o in objects}

    @staticmethod
    def _key(obj: Any) -> str:
        ns = getattr(obj, "namespace", "")
        return f"{ns}/{obj.name}" if ns else str(obj.name)

    def get(self, key: str) -> Any | None:
        return self._objects.get(key)

    def list(self) -> Sequence[Any]:
        return list(self._objects.values())

    def in_namespace(self, namespace: str) -> Mapping[str, Any]:
        return {k: o for k, o in self._objects.items() if k.startswith(f"{namespace}/")}

    def has_synced(self) -> bool:
        return True

    def add_listener(self, listener: Callable[[Any | None, Any | None], None]) -> None:
        """The objects never change: nothing to tell."""


class StoreHandle(FakeHandle):
    """FakeHandle whose `store()` serves fixed objects per InformerRequest.resource."""

    def __init__(
        self,
        node_infos: Sequence[NodeInfo] = (),
        stores: dict[str, Iterable[Any]] | None = None,
    ) -> None:
        super().__init__(node_infos)
        self._stores = {k: FakeStore(v) for k, v in (stores or {}).items()}

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        return self._stores.get(request.resource, FakeStore())


class Churn:
    """A cluster that changes at random, the way the scheduler's cache does between cycles.

    `live` holds the cache's NodeInfos (mutated in place, each change taking a fresh
    generation); `snapshot()` clones them as the per-cycle snapshot does. Used to check that
    memoized counts always equal a full recount.
    """

    def __init__(
        self,
        rng: random.Random,
        make_node_fn: Callable[[random.Random, str], Node],
        make_pod_fn: Callable[[random.Random, str, str], Pod],
        nodes: int = 12,
    ) -> None:
        self._rng = rng
        self._make_node = make_node_fn
        self._make_pod = make_pod_fn
        self._seq = 0
        self._columnar = Snapshot()
        self.live: dict[str, NodeInfo] = {}
        for i in range(nodes):
            self.live[f"n{i}"] = NodeInfo(make_node_fn(rng, f"n{i}"))
        for _ in range(nodes * 2):
            self._add_pod()

    def _add_pod(self) -> None:
        name = self._rng.choice(list(self.live))
        self._seq += 1
        self.live[name].add_pod(self._make_pod(self._rng, f"p{self._seq}", name))

    def step(self) -> None:
        rng = self._rng
        op = rng.random()
        names = list(self.live)
        if op < 0.4 or not names:
            if names:
                self._add_pod()
        elif op < 0.65:
            ni = self.live[rng.choice(names)]
            if ni.pods:
                ni.remove_pod(rng.choice(ni.pods))
        elif op < 0.85:
            name = rng.choice(names)
            self.live[name].set_node(self._make_node(rng, name))  # relabel / retaint
        elif op < 0.93 and len(names) > 2:
            del self.live[rng.choice(names)]
        else:
            self._seq += 1
            name = f"m{self._seq}"
            self.live[name] = NodeInfo(self._make_node(rng, name))

    def snapshot(self) -> list[NodeInfo]:
        return [ni.clone() for ni in self.live.values()]

    def columnar(self) -> Snapshot:
        """The same cluster as a real Snapshot kept up to date the way Cache.update_snapshot
        does (changed rows rewritten in place, the list rebuilt when nodes come or go), so
        memos see NodeRows and take their row-generation path."""
        snap = self._columnar
        renumber = False
        for name in [n for n in list(snap._map) if n not in self.live]:
            snap._drop(name)
            renumber = True
        for name, ni in self.live.items():
            old = snap.get(name)
            if old is None or old.generation != ni.generation:
                renumber |= not snap._replace(ni.clone())
        if renumber:
            snap.rebuild_lists(list(self.live))
        return snap
