"""The per-cycle snapshot: an immutable view of every node for one scheduling cycle.

The cache refreshes it incrementally before each cycle (only nodes changed since the last
refresh are cloned, as kube-scheduler's Cache.UpdateSnapshot does), so a cycle that awaits
between fan-out chunks still sees one consistent cluster while informers keep writing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from asched.framework.columns import NodeColumns, NodeRows, subset
from asched.framework.nodeinfo import NodeInfo


class Snapshot:
    __slots__ = (
        "_affinity",
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
