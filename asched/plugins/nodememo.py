"""Per-node contributions memoized across scheduling cycles, validated by NodeInfo.generation.

PreFilter and PreScore of the spreading and affinity plugins count matching pods over every
node of the cluster, every cycle. Between two cycles only the nodes that received or lost a
pod change, and their NodeInfo.generation says so (the cache takes a fresh generation on
every change and the snapshot's clones keep it). A `NodeMemo` keeps what each node
contributed to an aggregate, recomputes only nodes whose generation (or Node object) moved,
withdraws nodes that left the list, and tells the aggregate the difference. The aggregate is
therefore always what a full recomputation over the same nodes would give; the per-node
function is the one the full computation uses, so the two cannot drift.

A memo is only valid for one set of inputs besides the nodes (the incoming pod's shape), so
`MemoCache` keeps a few of them keyed by everything a contribution depends on, evicting the
least recently used. Upstream kube-scheduler does the same (plugins/nodememo); this module
is shared with InterPodAffinity and could move to a common plugins module.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

import numpy as np

from asched.api import Node
from asched.framework.columns import Int64s, NodeRows
from asched.framework.nodeinfo import NodeInfo

T = TypeVar("T")
E = TypeVar("E")


class NodeMemo(Generic[T]):
    """What each node contributed last time, with the generation it was computed at."""

    __slots__ = ("_entries", "_epoch", "_gens", "_rows")

    def __init__(self) -> None:
        # node name -> (generation, Node object, contribution or None)
        self._entries: dict[str, tuple[int, Node | None, T | None]] = {}
        # For node lists from the snapshot's columns (NodeRows): the generation each row
        # had when last computed, -1 for rows not in the list (a generation is never
        # negative, so such a row reads as changed when it comes back); the rows of the
        # last list; and the columns' epoch those row numbers belong to.
        self._epoch = -1
        self._gens: Int64s | None = None
        self._rows: Int64s | None = None

    def refresh(
        self,
        nodes: Sequence[NodeInfo],
        compute: Callable[[NodeInfo], T | None],
        apply: Callable[[T | None, T | None], None],
    ) -> int:
        """Bring the aggregate up to `nodes`: `apply(old, new)` for each node that changed.

        Returns how many nodes were recomputed (or withdrawn). For a NodeRows the changed
        rows are found by comparing the generation column with what this memo saw, in
        one array operation, instead of visiting every node.
        """
        if isinstance(nodes, NodeRows):
            cols = nodes.columns
            gens, last = self._gens, self._rows
            if gens is not None and last is not None and self._epoch == cols.epoch:
                return self._refresh_rows(nodes, gens, last, compute, apply)
            changed = self._refresh_all(nodes, compute, apply)
            self._epoch = cols.epoch
            self._gens = np.full(len(cols), -1, dtype=np.int64)
            self._gens[nodes.rows] = cols.generation[nodes.rows]
            self._rows = nodes.rows.copy()
            return changed
        self._gens = self._rows = None  # a plain list: the row view is no longer known
        return self._refresh_all(nodes, compute, apply)

    def _refresh_rows(
        self,
        nodes: NodeRows,
        gens: Int64s,
        last: Int64s,
        compute: Callable[[NodeInfo], T | None],
        apply: Callable[[T | None, T | None], None],
    ) -> int:
        cols, rows = nodes.columns, nodes.rows
        entries = self._entries
        current = cols.generation[rows]
        stale = np.flatnonzero(current != gens[rows])
        for k in stale.tolist():
            ni = nodes[k]
            e = entries.get(ni.name)
            cur = compute(ni)
            old = e[2] if e is not None else None
            if old is not None or cur is not None:
                apply(old, cur)
            entries[ni.name] = (ni.generation, ni.node, cur)
        gens[rows[stale]] = current[stale]
        # Usually the list is the last one (same nodes, or a few more): then no node left
        # it, and the list-wide mask below is not needed.
        if rows is last or (len(rows) >= len(last) and np.array_equal(rows[: len(last)], last)):
            if rows is not last:
                self._rows = rows.copy()
            return len(stale)
        now = np.zeros(len(cols), dtype=np.bool_)
        now[rows] = True
        left = np.flatnonzero((gens >= 0) & ~now)
        names = cols.names
        for r in left.tolist():
            gone = entries.pop(names[r], None)
            if gone is not None and gone[2] is not None:
                apply(gone[2], None)
        gens[left] = -1
        self._rows = rows.copy()
        return len(stale) + len(left)

    def _refresh_all(
        self,
        nodes: Sequence[NodeInfo],
        compute: Callable[[NodeInfo], T | None],
        apply: Callable[[T | None, T | None], None],
    ) -> int:
        entries = self._entries
        changed = 0
        for ni in nodes:
            e = entries.get(ni.name)
            # The Node object too: a generation alone can repeat after a node is removed.
            if e is not None and e[0] == ni.generation and e[1] is ni.node:
                continue
            cur = compute(ni)
            old = e[2] if e is not None else None
            if old is not None or cur is not None:
                apply(old, cur)
            entries[ni.name] = (ni.generation, ni.node, cur)
            changed += 1
        if len(entries) != len(nodes):
            present = {ni.name for ni in nodes}
            for name in [n for n in entries if n not in present]:
                old = entries.pop(name)[2]
                if old is not None:
                    apply(old, None)
                changed += 1
        return changed


class MemoCache(Generic[E]):
    """A few memo entries keyed by the inputs they depend on; least recently used goes first."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int = 16) -> None:
        self._entries: OrderedDict[Hashable, E] = OrderedDict()
        self._size = size

    def get_or_create(self, key: Hashable, create: Callable[[], E]) -> E:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry
        entry = create()
        self._entries[key] = entry
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return entry

    def __len__(self) -> int:
        return len(self._entries)
