"""Opportunistic batching: a pod like the one before it reuses that pod's ranking.

kube-scheduler 1.37 (OpportunisticBatching, beta and on; framework/runtime/batch.go) keeps,
per profile, the scored nodes of the last pod it placed, minus the node it chose. The next
pod gets the best of them as a *hint* when all of these hold (batchStateCompatible):
- it is the very next scheduling cycle (or the same one, inside a pod-group cycle);
- it has the same signature (asched.framework.signatures), and one at all;
- it has no nominated node;
- the kept ranking is less than 500 ms old (maxBatchAge).
Before the hint is taken, the node chosen last is filtered again for this pod; if it still
fits it is rescored (PreScore over all kept nodes plus it, its Score, NormalizeScore over
all) and competes again (refreshHintCandidates, rescoreHintedNode). The algorithm then
filters the hinted node alone, as it would a nominated node, and takes it if it fits:
no Filter over the other nodes, no Score, and the round-robin start does not move.
StoreScheduleResults keeps the new ranking when no hint was given or it was not used.

This is how kube-scheduler decides, not only a shortcut: once percentageOfNodesToScore
samples the nodes, a batched pod chooses among the nodes the first pod of its batch saw,
where a fresh evaluation would look at the next window of nodes; asched batches exactly
when kube-scheduler does so their choices agree. The default profile never batches: its
PodTopologySpread system defaults make every pod unsignable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from asched.api import Pod
from asched.base.clock import Clock
from asched.framework.columns import NodeColumns, NodeRows
from asched.framework.cycle_state import CycleState
from asched.framework.listers import SnapshotLister
from asched.framework.nodeinfo import NodeInfo
from asched.framework.services import RuntimeMetrics
from asched.framework.sorted_nodes import SortedScoredNodes
from asched.framework.status import Status
from asched.framework.types import Int64Array, ScoreTable

#: batch.go maxBatchAge: a ranking older than this is not reused.
MAX_BATCH_AGE = 0.5

# scheduler_batch_attempts_total{result} (metrics.go BatchAttempt*).
NO_HINT = "no_hint"
HINT_USED = "hint_used"
HINT_NOT_USED = "hint_not_used"

# scheduler_batch_cache_flushed_total{reason} (metrics.go BatchFlush*).
POD_SKIPPED = "pod_skipped"
POD_NOMINATED = "pod_nominated"
NODE_MISSING = "node_missing"
EMPTY_LIST = "empty_list"
EXPIRED = "expired"
POD_INCOMPATIBLE = "pod_incompatible"
POD_NOT_BATCHABLE = "pod_not_batchable"
FILTER_ERROR = "filter_error"
PRESCORE_ERROR = "prescore_error"
RESCORE_ERROR = "rescore_error"
NORMALIZE_ERROR = "normalize_error"


class BatchRuntime(Protocol):
    """The parts of a profile's runtime the batch calls (batch.go batchHandle)."""

    @property
    def profile_name(self) -> str: ...

    async def run_filter_plugins(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    async def run_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None: ...

    async def run_raw_score_plugins(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[list[tuple[str, int]], Status | None]: ...

    def normalize_scores(
        self,
        state: CycleState,
        pod: Pod,
        raws: Sequence[tuple[str, Int64Array]],
        names: Callable[[], list[str]],
    ) -> tuple[ScoreTable, Status | None]: ...


@dataclass(slots=True)
class Ranking:
    """The scored nodes of one cycle: names and raw scores by entry id, and the heap of
    the ids not yet handed out. When the scored nodes were rows of the snapshot's
    columns, their rows too, so a rescore finds them without a lookup per node for as
    long as the rows keep their numbers (the columns' epoch)."""

    names: list[str]
    raw: dict[str, Int64Array]
    heap: SortedScoredNodes
    cols: NodeColumns | None = None
    epoch: int = -1
    rows: list[int] = field(default_factory=list)

    def resolve(self, ids: Sequence[int], snapshot: SnapshotLister) -> Sequence[NodeInfo] | None:
        """resolveCachedCandidates: the current NodeInfos of `ids`; None if one is gone."""
        cols = self.cols
        if cols is not None and cols.epoch == self.epoch:
            rows = np.asarray([self.rows[i] for i in ids], dtype=np.int64)
            return NodeRows(cols.infos_at(rows), cols, rows)
        out: list[NodeInfo] = []
        for i in ids:
            ni = snapshot.get(self.names[i])
            if ni is None:
                return None
            out.append(ni)
        return out


@dataclass(slots=True)
class _State:
    signature: bytes
    ranking: Ranking
    created: float


@dataclass(slots=True)
class _LastCycle:
    """The cycle StoreScheduleResults saw last. Go also keeps `succeeded` (flush reason
    pod_failed), which is true whenever it is set, so its check is left out here."""

    cycle: int = 0
    chosen: str = ""


def ranking_from(table: ScoreTable, nodes: Sequence[NodeInfo]) -> tuple[Ranking, int]:
    """NewSortedScoredNodes over a cycle's scores of `nodes`, and the id it pops first
    (the node schedulePod chooses)."""
    totals = table.totals_array
    tl = table.totals if totals is None else totals.tolist()
    raw = {ps.plugin: ps.raw_array for ps in table.plugins}
    heap = SortedScoredNodes(range(len(tl)), tl)
    first = heap.pop()
    ranking = Ranking(table.nodes, raw, heap)
    if isinstance(nodes, NodeRows):
        ranking.cols, ranking.epoch = nodes.columns, nodes.columns.epoch
        ranking.rows = nodes.rows.tolist()
    return ranking, first


class OpportunisticBatch:
    """One profile's batch state (batch.go OpportunisticBatch)."""

    def __init__(
        self,
        runtime: BatchRuntime,
        *,
        snapshot: Callable[[], SnapshotLister],
        clock: Clock,
        metrics: Callable[[], RuntimeMetrics | None],
        generic_workload: bool = True,
    ) -> None:
        """`generic_workload`: a pod-group cycle's pods share one cycle number and may
        batch within it (asched always serves the native gang API)."""
        self._rt = runtime
        self._snapshot = snapshot
        self._clock = clock
        self._metrics = metrics
        self._generic_workload = generic_workload
        self._state: _State | None = None
        self._last = _LastCycle()
        # The entry id of the node handed out last (the hint, or the stored cycle's pick).
        self._last_entry = -1
        # Pods placed through a hint (batchedPods, for tests).
        self.batched_pods = 0

    # ---- GetNodeHint ------------------------------------------------------------------
    async def node_hint(
        self, pod: Pod, signature: bytes | None, state: CycleState, cycle: int
    ) -> str:
        """GetNodeHint: the node this pod should try first, or "" for a full evaluation."""
        hint = ""
        if self._compatible(pod, signature, cycle) and await self._refresh(pod, cycle, state):
            assert self._state is not None
            ranking = self._state.ranking
            self._last_entry = ranking.heap.pop()
            hint = ranking.names[self._last_entry]
        if not hint:
            self._attempt(NO_HINT)
        return hint

    def _compatible(self, pod: Pod, signature: bytes | None, cycle: int) -> bool:
        """batchStateCompatible. A flush only counts: the state stays until the next
        StoreScheduleResults replaces it, as in Go."""
        st = self._state
        if st is None or not len(st.ranking.heap):
            return False
        last = self._last
        if cycle != last.cycle + 1 and not (self._generic_workload and cycle == last.cycle):
            return self._flush(POD_SKIPPED)
        if pod.nominated_node_name:
            return self._flush(POD_NOMINATED)
        if signature is None or signature != st.signature:
            return self._flush(POD_INCOMPATIBLE)
        if self._clock.now() > st.created + MAX_BATCH_AGE:
            return self._flush(EXPIRED)
        return True

    async def _refresh(self, pod: Pod, cycle: int, state: CycleState) -> bool:
        """refreshHintCandidates: filter the last chosen node for this pod; rescore it if
        it still fits."""
        ni = self._snapshot().get(self._last.chosen)
        if ni is None:
            return self._flush(NODE_MISSING)
        st = await self._rt.run_filter_plugins(state, pod, ni)
        if st is None or st.is_success():
            return await self._rescore(pod, state, ni)
        if not st.is_rejected():
            return self._flush(FILTER_ERROR)
        return True

    async def _rescore(self, pod: Pod, state: CycleState, chosen: NodeInfo) -> bool:
        """rescoreHintedNode: PreScore over every kept node plus the chosen one, Score of
        the chosen one, NormalizeScore over all, then a new heap."""
        assert self._state is not None
        m = self._metrics()
        if m is not None:
            m.batch_rescore(self._rt.profile_name)
        ranking = self._state.ranking
        ids = ranking.heap.unordered()
        # The chosen node gets a new entry, as Go appends a fresh NodePluginScores.
        entry = len(ranking.names)
        ranking.names.append(chosen.name)
        if ranking.rows:
            ranking.rows.append(ranking.rows[self._last_entry])
        infos = ranking.resolve([*ids, entry], self._snapshot())
        if infos is None:
            return self._flush(NODE_MISSING)
        # Writes of the rescore's PreScore stay out of the pod's own cycle state.
        rescore_state = state.clone()
        st = await self._rt.run_pre_score(rescore_state, pod, infos)
        if st is not None and not st.is_success():
            return self._flush(PRESCORE_ERROR)
        fresh, st = await self._rt.run_raw_score_plugins(rescore_state, pod, chosen)
        if st is not None:
            return self._flush(RESCORE_ERROR)
        order = np.asarray([*ids, entry], dtype=np.int64)
        raws: list[tuple[str, Int64Array]] = []
        for name, score in fresh:
            before = ranking.raw.get(name)
            # A plugin the kept nodes were not scored by counts 0 for them (Go's zero
            # NodeScore in NormalizeScores).
            column = np.zeros(entry + 1, dtype=np.int64)
            if before is not None:
                column[: len(before)] = before
            column[entry] = score
            ranking.raw[name] = column
            raws.append((name, column[order]))
        names = ranking.names
        table, st = self._rt.normalize_scores(
            rescore_state, pod, raws, lambda: [names[i] for i in order.tolist()]
        )
        if st is not None:
            return self._flush(NORMALIZE_ERROR)
        totals = table.totals if table.totals_array is None else table.totals_array.tolist()
        if totals[:-1] == ranking.heap.totals():
            ranking.heap.push_and_init(entry, totals[-1])
        else:
            ranking.heap = SortedScoredNodes(order.tolist(), totals)
        return True

    # ---- StoreScheduleResults ---------------------------------------------------------
    def store(
        self,
        signature: bytes | None,
        hinted: str,
        chosen: str,
        cycle: int,
        *,
        scores: ScoreTable | None = None,
        nodes: Sequence[NodeInfo] = (),
    ) -> None:
        """StoreScheduleResults: remember this cycle, and unless the hint was used keep the
        ranking of `scores` (the cycle's scores of `nodes`; None when one node was
        feasible) without the chosen node for the next pod."""
        self._last = _LastCycle(cycle, chosen)
        if hinted == chosen:
            self._attempt(HINT_USED)
            self.batched_pods += 1
            return
        if hinted:
            self._attempt(HINT_NOT_USED)
        scored = (
            0
            if scores is None
            else len(scores.totals_array if scores.totals_array is not None else scores.totals)
        )
        if signature is not None and scores is not None and scored > 1:
            ranking, self._last_entry = ranking_from(scores, nodes)
            self._state = _State(signature, ranking, self._clock.now())
            return
        self._flush(EMPTY_LIST if scored <= 1 else POD_NOT_BATCHABLE)
        self._state = None

    # ---- metrics ----------------------------------------------------------------------
    def _attempt(self, result: str) -> None:
        m = self._metrics()
        if m is not None:
            m.batch_attempt(self._rt.profile_name, result)

    def _flush(self, reason: str) -> bool:
        """logUnusableState; returns False for the caller to return."""
        m = self._metrics()
        if m is not None:
            m.batch_flushed(self._rt.profile_name, reason)
        return False
