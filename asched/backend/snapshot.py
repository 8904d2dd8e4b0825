"""The per-cycle snapshot: an immutable view of every node for one scheduling cycle.

The cache refreshes it incrementally before each cycle (only nodes changed since the last
refresh are cloned, as kube-scheduler's Cache.UpdateSnapshot does), so a cycle that awaits
between fan-out chunks still sees one consistent cluster while informers keep writing.

A pod group cycle simulates its members in the snapshot alone (kube-scheduler's
Snapshot.AssumePod and ForgetPod, used when IsPodGroupSchedulingCycle): `assume_pod`
stores a copy of the node with the pod added, and `forget_pod` puts back the NodeInfo the
node had before the cycle once none of its simulated pods is left, so a reverted
simulation leaves every row as it found it (the same objects, generations included) and
the cache never sees the pods.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from asched.api import Pod
from asched.framework.columns import NodeColumns, NodeRows, subset
from asched.framework.nodeinfo import NodeInfo


class SnapshotError(RuntimeError):
    """The snapshot was asked to assume or forget inconsistently (a scheduler bug)."""


class _Assumed:
    """The simulated pods on one node and the NodeInfo it had before the first of them."""

    __slots__ = ("base", "pods")

    def __init__(self, base: NodeInfo) -> None:
        self.base = base
        self.pods: dict[str, Pod] = {}


class Snapshot:
    __slots__ = (
        "_affinity",
        "_assumed",
        "_assumed_node",
        "_cols",
        "_index",
        "_list",
        "_map",
        "_required_anti_affinity",
    )

    def __init__(self, node_infos: Sequence[NodeInfo] = ()) -> None:
        self._map: dict[str, NodeInfo] = {ni.name: ni for ni in node_infos}
        self._cols = NodeColumns()
        self._list = self._rows(list(node_infos))
        self._index: dict[str, int] = {ni.name: i for i, ni in enumerate(self._list)}
        # (NodeColumns.affinity_version or anti_affinity_version, list) caches of the two
        # affinity subsets.
        self._affinity: tuple[int, NodeRows] | None = None
        self._required_anti_affinity: tuple[int, NodeRows] | None = None
        # Simulated pods (assume_pod) by node name, and the node of each by uid.
        self._assumed: dict[str, _Assumed] = {}
        self._assumed_node: dict[str, str] = {}

    def _rows(self, infos: list[NodeInfo]) -> NodeRows:
        """The node list, with the columns rebuilt to match it row for row."""
        self._cols.rebuild(infos)
        rows = NodeRows(infos, self._cols, np.arange(len(infos), dtype=np.int64))
        # One list, shared: a replaced NodeInfo is seen by both.
        self._cols.infos = rows
        return rows

    def rebuild_lists(self, order: Sequence[str]) -> None:
        """Recompute the node list in `order` (nodes were added or removed)."""
        self._list = self._rows([self._map[n] for n in order if n in self._map])
        self._index = {ni.name: i for i, ni in enumerate(self._list)}

    # SnapshotLister
    def node_infos(self) -> Sequence[NodeInfo]:
        return self._list

    @property
    def columns(self) -> NodeColumns:
        """The node list's columns (row i = node_infos()[i]), kept current by _replace."""
        return self._cols

    def get(self, node_name: str) -> NodeInfo | None:
        return self._map.get(node_name)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        """Nodes with a pod that has pod (anti-)affinity, in node order, from the columns
        (kept current row by row), remade only when such a row changed since the last
        call (NodeColumns.affinity_version)."""
        cols = self._cols
        version = cols.affinity_version
        if self._affinity is None or self._affinity[0] != version:
            self._affinity = (version, subset(cols, cols.with_affinity))
        return self._affinity[1]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        cols = self._cols
        version = cols.anti_affinity_version
        cached = self._required_anti_affinity
        if cached is None or cached[0] != version:
            cached = (version, subset(cols, cols.with_required_anti_affinity))
            self._required_anti_affinity = cached
        return cached[1]

    def num_nodes(self) -> int:
        return len(self._list)

    # ---- a pod group cycle's simulation -------------------------------------------
    def assume_pod(self, pod: Pod) -> None:
        """Snapshot.AssumePod: count `pod` (a copy with node_name set) on its node in this
        snapshot only. The node's NodeInfo is replaced by a copy with the pod added (with a
        new generation, so column memos see the change); the one it replaces may be held
        by a plugin's state from earlier in the cycle, and stays as it was."""
        name = pod.node_name
        i = self._index.get(name)
        if i is None:
            raise SnapshotError(f"assume_pod: pod {pod.key}'s node {name!r} is not in the snapshot")
        if pod.uid in self._assumed_node:
            raise SnapshotError(f"assume_pod: pod {pod.key} is already assumed in the snapshot")
        current = self._list[i]
        held = self._assumed.get(name)
        if held is None:
            held = self._assumed[name] = _Assumed(current)
        ni = current.clone()
        ni.add_pod(pod)
        held.pods[pod.uid] = pod
        self._assumed_node[pod.uid] = name
        self._store(i, ni)

    def forget_pod(self, pod: Pod) -> None:
        """Snapshot.ForgetPod: undo assume_pod. The last simulated pod of a node to go
        puts back the node's NodeInfo from before the first; in between (pods forgotten
        out of order) the node is copied without the pod."""
        name = self._assumed_node.pop(pod.uid, None)
        if name is None:
            raise SnapshotError(f"forget_pod: pod {pod.key} is not assumed in the snapshot")
        held = self._assumed[name]
        assumed = held.pods.pop(pod.uid)
        i = self._index[name]
        if not held.pods:
            del self._assumed[name]
            self._store(i, held.base)
            return
        ni = self._list[i].clone()
        ni.remove_pod(assumed)
        self._store(i, ni)

    def assumed_pods(self) -> int:
        """How many pods are assumed in the snapshot (0 outside a group cycle)."""
        return len(self._assumed_node)

    def forget_all_assumed(self) -> int:
        """forgetAllAssumedPods: every node back as it was before the simulation; the
        count of pods forgotten (a safety net: a cycle forgets its own)."""
        count = len(self._assumed_node)
        for name, held in self._assumed.items():
            self._store(self._index[name], held.base)
        self._assumed.clear()
        self._assumed_node.clear()
        return count

    def _store(self, i: int, ni: NodeInfo) -> None:
        self._map[ni.name] = ni
        self._cols.set_row(i, ni)  # also stores it in the shared node list

    # Written only by Cache.update_snapshot.
    def _replace(self, ni: NodeInfo) -> bool:
        """Store a fresh clone; False when the node is new (the lists need a rebuild)."""
        self._map[ni.name] = ni
        i = self._index.get(ni.name)
        if i is None:
            return False
        self._cols.set_row(i, ni)  # also stores it in the shared node list
        return True

    def _drop(self, name: str) -> None:
        self._map.pop(name, None)
        self._index.pop(name, None)
