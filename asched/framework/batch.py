"""The columnar Filter and Score passes: the runtime's fast path over NodeColumns.

Used by Framework.run_filter_over_nodes / run_score_plugins when the profile allows it
(`columnar`, on by default) and the nodes come from the snapshot (a NodeRows). A plugin
takes part through its batch form (BatchFilterPlugin, BatchScorePlugin), or through a
memo when it is node-static (NodeStaticPlugin, asched.framework.memo). The semantics are
the per-node path's, which are kube-scheduler's findNodesThatPassFilters and
RunScorePlugins:
- nodes are taken round the list from `start`, and the pass stops at the node that makes
  `limit` feasible (so `processed`, and the next cycle's start, are the same);
- a rejected node gets the status of the first Filter plugin, in profile order, that
  rejects it;
- scores are raw -> NormalizeScore -> range check -> weight -> total, per plugin.
This module answers for the batch plugins (Verdicts) and decides a pass whose plugins
are all batch; asched.framework.filtering runs the per-node plugins on the nodes the
batch plugins leave, and kube-scheduler's two passes on nodes with nominated pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from asched.api import Pod
from asched.framework.columns import (
    BatchVerdict,
    Bools,
    Int64s,
    NodeColumns,
    NodeRows,
    Unbatchable,
)
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import (
    BatchFilterPlugin,
    BatchScoreNormalizer,
    BatchScorePlugin,
    FilterPlugin,
    ScorePlugin,
)
from asched.framework.memo import FilterMemo, ScoreMemo, memoizable
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status
from asched.framework.types import FilterPass, NodeToStatus, RejectedChunk


def as_rows(nodes: Sequence[NodeInfo]) -> NodeRows | None:
    return nodes if isinstance(nodes, NodeRows) else None


class BatchPlugins:
    """The batch-capable plugins of one profile, found once: each plugin's own batch form,
    else a memo of a node-static plugin (asched.framework.memo)."""

    def __init__(self, filters: Mapping[str, object], scores: Mapping[str, object]) -> None:
        self.filters: dict[str, BatchFilterPlugin] = {}
        for n, p in filters.items():
            if isinstance(p, BatchFilterPlugin):
                self.filters[n] = p
            elif isinstance(p, FilterPlugin) and memoizable(p, p.filter):
                self.filters[n] = FilterMemo(n, p)
        self.scores: dict[str, BatchScorePlugin] = {}
        for n, p in scores.items():
            if isinstance(p, BatchScorePlugin):
                self.scores[n] = p
            elif isinstance(p, ScorePlugin) and memoizable(p, p.score):
                self.scores[n] = ScoreMemo(n, p)
        self.normalizers: dict[str, BatchScoreNormalizer] = {
            n: p for n, p in scores.items() if isinstance(p, BatchScoreNormalizer)
        }


def rotated(rows: Int64s, start: int) -> Int64s:
    """`rows` from position `start` round to `start - 1` (the round-robin order)."""
    if start == 0:
        return rows
    return np.concatenate((rows[start:], rows[:start]))


# "No batch plugin rejects this position" in Verdicts.first.
NONE = np.iinfo(np.int64).max


class Verdicts:
    """The batch Filter plugins' answers for one pod over rows in round-robin order.

    `positions` index `rows` (position k is node rows[k]). Each verdict is kept with the
    index of its plugin in the pod's Filter plugin list, so the first rejecting plugin of
    a node, in profile order, is known across batch and per-node plugins alike.
    """

    def __init__(self, cols: NodeColumns, rows: Int64s) -> None:
        self.cols = cols
        self.rows = rows
        self.verdicts: list[tuple[int, str, BatchVerdict]] = []
        self.passed: Bools | None = None  # None: every position passes every batch plugin

    def add(self, index: int, name: str, v: BatchVerdict) -> None:
        self.verdicts.append((index, name, v))
        self.passed = (
            v.passed.copy()
            if self.passed is None
            else np.logical_and(self.passed, v.passed, out=self.passed)
        )

    def first(self) -> Int64s:
        """Per position, the plugin index of the first batch plugin that rejects it."""
        out = np.full(len(self.rows), NONE, dtype=np.int64)
        for index, _, v in reversed(self.verdicts):
            out[~v.passed] = index
        return out

    def status_at(self, k: int, index: int) -> Status:
        """The status of the plugin at `index` for position `k` (which it rejects)."""
        for i, name, v in self.verdicts:
            if i == index:
                return v.status_at(k).with_plugin(name)
        raise LookupError(index)

    def label(self, undecided: Bools, statuses: NodeToStatus) -> None:
        """Record, for each position where `undecided` (a prefix of the positions) holds,
        the first rejecting batch plugin's status. Statuses are all computed before any is
        written: a failing status_at leaves `statuses` as it was. They are handed over as
        arrays (NodeToStatus.defer_rejections): no per-node object is made unless a
        node's status is read."""
        undecided = undecided.copy()
        cols, rows = self.cols, self.rows
        m = len(undecided)
        name_array = cols.name_array
        chunks: list[RejectedChunk] = []
        counts: list[tuple[Status, int]] = []
        # Each plugin, in profile order, answers for the nodes no earlier plugin rejected.
        for _, name, v in self.verdicts:
            mine = undecided & ~v.passed[:m]
            if not mine.any():
                continue
            undecided &= ~mine
            ks = np.flatnonzero(mine)
            # The names now (a gather makes a copy): the columns' rows are rewritten by the
            # next snapshot update.
            failed = name_array[rows[ks]]
            if v.table and (v.codes is not None or len(v.table) == 1):
                labelled = tuple(st.with_plugin(name) for st in v.table)
                if v.codes is None:
                    chunks.append((failed, None, labelled))
                    counts.append((labelled[0], len(failed)))
                else:
                    codes = v.codes[ks]
                    chunks.append((failed, codes.tolist(), labelled))
                    per_code = np.bincount(codes, minlength=len(labelled) + 1).tolist()
                    counts.extend((st, per_code[i + 1]) for i, st in enumerate(labelled))
                continue
            # Plugins mostly reject with a handful of shared Status objects: label each once.
            # id -> (code, labelled, nodes, the status itself: kept so its id stays its own)
            by_id: dict[int, tuple[int, Status, int, Status]] = {}
            node_codes: list[int] = []
            for k in ks.tolist():
                st = v.status_at(k)
                held = by_id.get(id(st))
                if held is None:
                    held = (len(by_id) + 1, st.with_plugin(name), 0, st)
                by_id[id(st)] = (held[0], held[1], held[2] + 1, st)
                node_codes.append(held[0])
            chunks.append((failed, node_codes, tuple(h[1] for h in by_id.values())))
            counts.extend((h[1], h[2]) for h in by_id.values())
        statuses.defer_rejections(chunks, counts)


def all_batch_pass(verdicts: Verdicts, *, limit: int, statuses: NodeToStatus) -> FilterPass:
    """The pass when every Filter plugin left for the pod answered from the columns and
    no node holds a nominated pod: decided in a few array operations."""
    cols, rows = verdicts.cols, verdicts.rows
    n = len(rows)
    passed = verdicts.passed
    if passed is None:
        processed = min(limit, n)
        return FilterPass(nodes_at(cols, rows[:processed]), processed)
    cum = np.cumsum(passed)
    # The pass stops at the node that makes `limit` feasible.
    processed = int(np.searchsorted(cum, limit)) + 1 if int(cum[-1]) >= limit else n
    head = passed[:processed]
    verdicts.label(~head, statuses)
    return FilterPass(nodes_at(cols, rows[:processed][head]), processed)


def nodes_at(cols: NodeColumns, rows: Int64s) -> NodeRows:
    return NodeRows(cols.infos_at(rows), cols, rows)


def score_raw(
    plugins: BatchPlugins, name: str, state: CycleState, pod: Pod, nodes: NodeRows
) -> Int64s | None:
    """The plugin's raw scores for `nodes` from the columns, or None if it has no batch."""
    p = plugins.scores.get(name)
    if p is None:
        return None
    try:
        return p.score_batch(state, pod, nodes.columns, nodes.rows)
    except Unbatchable:
        return None


def normalize(
    plugins: BatchPlugins, name: str, state: CycleState, pod: Pod, raw: Int64s
) -> Int64s | None:
    """The plugin's NormalizeScore over an array, or None if it has no batch form."""
    p = plugins.normalizers.get(name)
    if p is None:
        return None
    try:
        return p.normalize_batch(state, pod, raw)
    except Unbatchable:
        return None
