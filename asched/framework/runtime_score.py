"""The scoring side of the framework runtime: PreScore and Score.

Follows kube-scheduler's frameworkImpl RunPreScorePlugins and RunScorePlugins; scoring,
NormalizeScore and the weighted total per node are asched.framework.scoring.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import PreScorePlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime_base import RuntimeBase
from asched.framework.scoring import ScoreFn, Scorer
from asched.framework.status import Code, Status, error, wrap_error
from asched.framework.types import ScoreTable


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
