"""Score columns kept across cycles for scores that read only the node's own state.

NodeResourcesFit's and BalancedAllocation's scores of a node depend on the pod's requests
and on that node's requested and allocatable amounts, nothing else. Between two cycles
only the nodes that got or lost a pod change (their NodeInfo.generation moves, and a
generation names one NodeInfo state), yet the array scorers recomputed every scored row:
about a dozen numpy passes per plugin per cycle. `RowScores` keeps, per key (the pod's
requests), the score of every row with the generation it was computed at. The rows whose
generation moved are recomputed: a few, node by node with the plugin's per-node Score
(the function the columnar form must agree with, tests/unit/framework/
test_columns_agree.py), many with the array form over those rows only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from asched.framework.columns import Int64s, NodeColumns
from asched.framework.nodeinfo import NodeInfo
from asched.plugins.nodememo import MemoCache

# Up to this many stale rows, the per-node function beats a dozen numpy calls.
_PER_NODE_UP_TO = 16


class _Scored:
    __slots__ = ("epoch", "gens", "scores")

    def __init__(self, epoch: int, size: int) -> None:
        self.epoch = epoch
        # -1: never computed (a generation is never negative).
        self.gens: Int64s = np.full(size, -1, dtype=np.int64)
        self.scores: Int64s = np.zeros(size, dtype=np.int64)


class RowScores:
    """Per key (everything the score reads besides the node), the scores of the columns'
    rows."""

    __slots__ = ("_memo",)

    def __init__(self, size: int = 8) -> None:
        self._memo: MemoCache[_Scored] = MemoCache(size)

    def scores(
        self,
        key: Hashable,
        cols: NodeColumns,
        rows: Int64s,
        *,
        per_rows: Callable[[Int64s], Int64s],
        per_node: Callable[[NodeInfo], int],
    ) -> Int64s:
        """The scores of `rows`, computing only rows whose NodeInfo changed since they were
        last scored under `key`. `per_rows` (the array form over some rows) and `per_node`
        must give the same score and read nothing but `key` and the node."""
        entry = self._memo.get_or_create(key, lambda: _Scored(cols.epoch, len(cols)))
        if entry.epoch != cols.epoch or len(entry.gens) != len(cols):
            # Rows renumbered (a node came or went): start over.
            entry.epoch, entry.gens = cols.epoch, np.full(len(cols), -1, dtype=np.int64)
            entry.scores = np.zeros(len(cols), dtype=np.int64)
        current = cols.generation[rows]
        stale = np.flatnonzero(current != entry.gens[rows])
        if stale.size:
            at = rows[stale]
            if stale.size <= _PER_NODE_UP_TO:
                infos = cols.infos
                fresh: Int64s | list[int] = [per_node(infos[r]) for r in at.tolist()]
            else:
                fresh = per_rows(at)
            # Written only once all are computed: a failure leaves the rows stale.
            entry.scores[at] = fresh
            entry.gens[at] = current[stale]
        out: Int64s = entry.scores[rows]
        return out
