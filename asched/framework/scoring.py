"""Score, NormalizeScore, weights and totals for one profile (kube-scheduler RunScorePlugins).

One loop serves both paths. Each Score plugin scores every node, from the node columns
(`score_batch`) when the nodes came from the snapshot and the columnar path is on, else
node by node; NormalizeScore runs on the result (`normalize_batch` on the columnar path,
`normalize_score` otherwise); every normalized score must be in [0, 100]; the weighted
scores are totalled in int64, as Go's int64 scores. The messages are framework.go's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio.lowlevel
import numpy as np

from asched.api import Pod
from asched.framework.batch import BatchPlugins, as_rows, normalize, score_raw
from asched.framework.columns import Int64s
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import ScoreNormalizer
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status, error, wrap_error
from asched.framework.types import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    PluginScores,
    ScoreTable,
)

ScoreFn = Callable[[CycleState, Pod, NodeInfo], "int | Awaitable[int]"]
# Called inside `except` with where it happened: logs the stack and counts the bug.
Crashed = Callable[..., None]


def node_names(nodes: Sequence[NodeInfo]) -> list[str]:
    rows = as_rows(nodes)
    if rows is None:
        return [ni.name for ni in nodes]
    return list(map(rows.columns.names.__getitem__, rows.rows.tolist()))


def _score_failed(name: str, st: Status) -> Status:
    return wrap_error(f'running Score plugins: plugin "{name}" failed with', st, name)


def _out_of_range(name: str, normalized: Int64s) -> Status | None:
    # One reduction decides the usual case: read as unsigned, a negative int64 is above
    # any score, so "the largest uint64 <= MAX" is "every score in [0, MAX]" (with
    # MIN_NODE_SCORE 0), and a max makes no temporary array as a comparison does. The
    # offending entry is searched only on error.
    if not normalized.size:
        return None
    if normalized.dtype == np.int64 and MIN_NODE_SCORE == 0:
        if int(normalized.view(np.uint64).max()) <= MAX_NODE_SCORE:
            return None
    elif int(normalized.min()) >= MIN_NODE_SCORE and int(normalized.max()) <= MAX_NODE_SCORE:
        return None
    bad = np.flatnonzero((normalized < MIN_NODE_SCORE) | (normalized > MAX_NODE_SCORE))
    # kube-scheduler's wording (normalizeScores), which names no node.
    return error(
        "applying score defaultWeights on Score plugins: "
        f'plugin "{name}" returns an invalid score {int(normalized[bad[0]])}, it should in '
        f"the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
        name,
    )


class Scorer:
    def __init__(
        self,
        *,
        weights: Mapping[str, int],
        normalizers: Mapping[str, ScoreNormalizer],
        batch: BatchPlugins,
        crashed: Crashed,
    ) -> None:
        self._weights = weights
        self._normalizers = normalizers
        self._batch = batch
        self._crashed = crashed

    async def run(
        self,
        fns: Sequence[tuple[str, ScoreFn, bool]],
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        columnar: bool,
    ) -> tuple[ScoreTable, Status | None]:
        """Plugin-major: one plugin over every node, then the next, yielding to the event
        loop after each plugin that ran node by node. With no Score plugin every node
        totals 1, as kube-scheduler's prioritizeNodes gives them."""
        table = ScoreTable(lambda: node_names(nodes), name_at=lambda i: nodes[i].name)
        if not fns:
            table.totals = [1] * len(nodes)
            return table, None
        rows = as_rows(nodes) if columnar else None
        totals = np.zeros(len(nodes), dtype=np.int64)
        for name, fn, is_async in fns:
            try:
                raw = None if rows is None else score_raw(self._batch, name, state, pod, rows)
                per_node = raw is None
                if raw is None:
                    f: Any = fn  # int, or an awaitable of one when is_async
                    if is_async:
                        values = [int(await f(state, pod, ni)) for ni in nodes]
                    else:
                        values = [f(state, pod, ni) for ni in nodes]
                    raw = np.asarray(values, dtype=np.int64)
            except Exception as exc:
                self._crashed(plugin=name, point="Score", pod=pod.key)
                return table, _score_failed(name, error(exc, name))
            st = self._add(name, state, pod, table, raw, totals=totals, batch=rows is not None)
            if st is not None:
                return table, st
            if per_node:
                await anyio.lowlevel.checkpoint()
        table.totals_array = totals
        return table, None

    def totals_from_raw(
        self,
        raws: Sequence[tuple[str, Int64s]],
        state: CycleState,
        pod: Pod,
        names: Callable[[], list[str]],
        *,
        columnar: bool,
    ) -> tuple[ScoreTable, Status | None]:
        """NormalizeScores: the table of raw scores kept from earlier (per plugin, over the
        same nodes in the same order) normalized, weighted and totalled again, as
        opportunistic batching does after rescoring one node. `names` gives the nodes'
        names, for per-node NormalizeScore."""
        table = ScoreTable(names)
        n = len(raws[0][1]) if raws else 0
        totals = np.zeros(n, dtype=np.int64)
        for name, raw in raws:
            st = self._add(name, state, pod, table, raw, totals=totals, batch=columnar)
            if st is not None:
                return table, st
        table.totals_array = totals
        return table, None

    def _add(
        self,
        name: str,
        state: CycleState,
        pod: Pod,
        table: ScoreTable,
        raw: Int64s,
        *,
        totals: Int64s,
        batch: bool,
    ) -> Status | None:
        """One plugin's raw scores: normalized, checked, weighted, added to `totals`."""
        st, normalized = self._normalize(name, state, pod, table, raw, batch=batch)
        if st is not None:
            return st
        weight = self._weights.get(name, 1)
        weighted = normalized * weight
        totals += weighted
        table.plugins.append(PluginScores(name, weight, raw, normalized, weighted))
        return None

    def _normalize(
        self,
        name: str,
        state: CycleState,
        pod: Pod,
        table: ScoreTable,
        raw: Int64s,
        *,
        batch: bool,
    ) -> tuple[Status | None, Int64s]:
        """NormalizeScore when the plugin has one (over the array when `batch` allows and
        the plugin has a batch form), then the [0, 100] check."""
        normalized = raw
        normalizer = self._normalizers.get(name)
        if normalizer is not None:
            arr = normalize(self._batch, name, state, pod, raw) if batch else None
            if arr is not None:
                normalized = arr
            else:
                names = table.nodes  # per-node NormalizeScore works by node name
                scores = [NodeScore(n, v) for n, v in zip(names, raw.tolist(), strict=True)]
                try:
                    st = normalizer.normalize_score(state, pod, scores)
                except Exception as exc:
                    self._crashed(plugin=name, point="NormalizeScore", pod=pod.key)
                    st = error(exc, name)
                if st is not None and not st.is_success():
                    prefix = f'running Normalize on Score plugins: plugin "{name}" failed with'
                    return wrap_error(prefix, st, name), raw
                normalized = np.asarray([ns.score for ns in scores], dtype=np.int64)
        return _out_of_range(name, normalized), normalized
