"""The columnar Filter and Score passes: the runtime's fast path over NodeColumns.

Used by Framework.run_filter_over_nodes / run_score_plugins when the profile allows it
(`columnar`, on by default), the nodes come from the snapshot (a NodeRows), and - for
Filter - every Filter plugin left for the pod implements BatchFilterPlugin. The semantics
are the per-node path's, which are kube-scheduler's findNodesThatPassFilters and
RunScorePlugins:
- nodes are taken round the list from `start`, and the pass stops at the node that makes
  `limit` feasible (so `processed`, and the next cycle's start, are the same);
- a rejected node gets the status of the first Filter plugin, in profile order, that
  rejects it;
- scores are raw -> NormalizeScore -> range check -> weight -> total, per plugin.
Nodes with nominated pods need kube-scheduler's two Filter passes; the runtime keeps
those on the per-node path, as it does any pod whose Filter plugins are not all batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from asched.api import Pod
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns, NodeRows, Unbatchable
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import (
    BatchFilterPlugin,
    BatchScoreNormalizer,
    BatchScorePlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status
from asched.framework.types import FilterPass, NodeToStatus


def as_rows(nodes: Sequence[NodeInfo]) -> NodeRows | None:
    return nodes if isinstance(nodes, NodeRows) else None


class BatchPlugins:
    """The batch-capable plugins of one profile, found once."""

    def __init__(self, filters: Mapping[str, object], scores: Mapping[str, object]) -> None:
        self.filters: dict[str, BatchFilterPlugin] = {
            n: p for n, p in filters.items() if isinstance(p, BatchFilterPlugin)
        }
        self.scores: dict[str, BatchScorePlugin] = {
            n: p for n, p in scores.items() if isinstance(p, BatchScorePlugin)
        }
        self.normalizers: dict[str, BatchScoreNormalizer] = {
            n: p for n, p in scores.items() if isinstance(p, BatchScoreNormalizer)
        }

    def covers_filters(self, names: Sequence[str]) -> bool:
        return all(n in self.filters for n in names)


def rotated(rows: Int64s, start: int) -> Int64s:
    """`rows` from position `start` round to `start - 1` (the round-robin order)."""
    if start == 0:
        return rows
    return np.concatenate((rows[start:], rows[:start]))


def filter_pass(
    plugins: BatchPlugins,
    names: Sequence[str],
    state: CycleState,
    pod: Pod,
    nodes: NodeRows,
    *,
    start: int,
    limit: int,
    statuses: NodeToStatus,
) -> FilterPass:
    cols = nodes.columns
    n = len(nodes)
    rows = rotated(nodes.rows, start)
    verdicts: list[tuple[str, BatchVerdict]] = []
    passed: np.ndarray | None = None
    for name in names:
        v = plugins.filters[name].filter_batch(state, pod, cols, rows)
        if v is None:
            continue
        verdicts.append((name, v))
        passed = v.passed.copy() if passed is None else np.logical_and(passed, v.passed, out=passed)
    if passed is None:
        processed = min(limit, n)
        head_rows = rows[:processed]
        return FilterPass(_nodes(cols, head_rows), processed)
    cum = np.cumsum(passed)
    # The pass stops at the node that makes `limit` feasible.
    processed = int(np.searchsorted(cum, limit)) + 1 if int(cum[-1]) >= limit else n
    head = passed[:processed]
    names = cols.names
    rejected: dict[str, Status] = {}
    counts: list[tuple[Status, int]] = []
    # Each plugin, in profile order, answers for the nodes no earlier plugin rejected.
    undecided = ~head
    for name, v in verdicts:
        mine = undecided & ~v.passed[:processed]
        if not mine.any():
            continue
        undecided &= ~mine
        ks = np.flatnonzero(mine)
        failed = [names[r] for r in rows[ks].tolist()]
        if v.table and (v.codes is not None or len(v.table) == 1):
            labelled = [st.with_plugin(name) for st in v.table]
            if v.codes is None:
                found = [labelled[0]] * len(failed)
                counts.append((labelled[0], len(failed)))
            else:
                codes = v.codes[ks]
                found = [labelled[c - 1] for c in codes.tolist()]
                per_code = np.bincount(codes, minlength=len(labelled) + 1).tolist()
                counts.extend((st, per_code[i + 1]) for i, st in enumerate(labelled))
            rejected.update(zip(failed, found, strict=True))
            continue
        # Plugins mostly reject with a handful of shared Status objects: label each once.
        by_id: dict[int, tuple[Status, int]] = {}
        for k, node in zip(ks.tolist(), failed, strict=True):
            st = v.status_at(k)
            held = by_id.get(id(st))
            out = st.with_plugin(name) if held is None else held[0]
            by_id[id(st)] = (out, 1 if held is None else held[1] + 1)
            rejected[node] = out
        counts.extend(by_id.values())
    # Written only once every status is known: a failing status_at leaves `statuses`
    # as it was, for the per-node path the runtime then falls back to.
    statuses.add_rejections(rejected, counts)
    return FilterPass(_nodes(cols, rows[:processed][head]), processed)


def _nodes(cols: NodeColumns, rows: Int64s) -> NodeRows:
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
