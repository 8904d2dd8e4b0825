"""The scoring side of the framework runtime: PreScore and Score.

Follows kube-scheduler's frameworkImpl RunPreScorePlugins and RunScorePlugins; scoring,
NormalizeScore and the weighted total per node are asched.framework.scoring.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import PreScorePlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime_base import RuntimeBase
from asched.framework.scoring import ScoreFn, Scorer
from asched.framework.status import Code, Status, error, wrap_error
from asched.framework.types import Int64Array, ScoreTable


class ScoreRunner(RuntimeBase):
    """Runs the extension points that rank the feasible nodes."""

    pre_score_plugins: list[PreScorePlugin]
    _scores: list[tuple[str, ScoreFn, bool]]
    _scorer: Scorer

    # ---- PreScore / Score -----------------------------------------------------------
    async def run_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.pre_score_plugins:
            try:
                st: Any = p.pre_score(state, pod, nodes)
                # An async PreScore (allowed); sync ones return None or a Status.
                if st is not None and type(st) is not Status and inspect.isawaitable(st):
                    st = await st
            except Exception as exc:
                self._crashed(plugin=p.name, point="PreScore", pod=pod.key)
                status = wrap_error(f'running PreScore plugin "{p.name}"', error(exc, p.name))
                break
            if st is not None and st.code == Code.SKIP:
                state.skip_score_plugins.add(p.name)
                continue
            self._evaluated(p.name, "PreScore", 1)
            if st is not None and not st.is_success():
                status = wrap_error(f'running PreScore plugin "{p.name}"', st, p.name)
                break
        self._point("PreScore", status, start)
        return status

    def score_fns(self, state: CycleState) -> list[tuple[str, ScoreFn, bool]]:
        skip = state.skip_score_plugins
        return [sc for sc in self._scores if sc[0] not in skip]

    async def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[ScoreTable, Status | None]:
        """Score, NormalizeScore, weight, and total per node (asched.framework.scoring)."""
        start = time.perf_counter()
        fns = self.score_fns(state)
        for name, _, _ in fns:
            self._evaluated(name, "Score", len(nodes))
        table, status = await self._scorer.run(fns, state, pod, nodes, columnar=self.columnar)
        if fns:
            self._point("Score", status, start)
        return table, status

    async def run_raw_score_plugins(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[list[tuple[str, int]], Status | None]:
        """RunRawScorePlugins: each Score plugin left for the pod on one node, unnormalized
        (opportunistic batching rescores the node it chose last)."""
        out: list[tuple[str, int]] = []
        for name, fn, is_async in self.score_fns(state):
            try:
                f: Any = fn  # int, or an awaitable of one when is_async
                value = await f(state, pod, node_info) if is_async else f(state, pod, node_info)
            except Exception as exc:
                self._crashed(plugin=name, point="Score", pod=pod.key)
                return out, wrap_error(f'plugin "{name}" failed with', error(exc, name), name)
            out.append((name, int(value)))
        return out, None

    def normalize_scores(
        self,
        state: CycleState,
        pod: Pod,
        raws: Sequence[tuple[str, Int64Array]],
        names: Callable[[], list[str]],
    ) -> tuple[ScoreTable, Status | None]:
        """NormalizeScores over raw scores kept from earlier (Scorer.totals_from_raw)."""
        return self._scorer.totals_from_raw(raws, state, pod, names, columnar=self.columnar)
