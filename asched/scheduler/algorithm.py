"""Finding and ranking nodes for one pod: kube-scheduler's schedulePod, in Python.

- Node sampling (numFeasibleNodesToFind): all nodes under 100; otherwise the configured
  percentage, or adaptive max(50 - N/125, 5)%, and never fewer than 100 nodes.
- Filtering starts where the previous cycle stopped (round robin) and stops early once
  enough feasible nodes are found, so every node gets its turn.
- A pod with a nominated node (from preemption) tries that node first; so does a pod
  that opportunistic batching gives a node hint (asched.framework.opportunistic).
- Extenders (asched.extender), when configured, filter the nodes the Filter plugins
  kept and add their scores to the Score plugins' totals (findNodesThatPassExtenders,
  prioritizeNodes); with any, filtering never stops at the first feasible node.
- Scoring is skipped when one node is feasible; the best total wins. Without extenders
  ties are not broken at random: kube-scheduler 1.37 puts the scored nodes, in the order
  filtering found them, into a container/heap (NewSortedScoredNodes) and pops the top;
  its Randomizer field is only set for nodes an extender scored. Which tied node that
  is follows from the order alone (go_heap_top), so asched's choice is deterministic
  given the round-robin start; kube-scheduler's is deterministic given its feasible
  order, which its 16 parallel filter workers make in completion order, so the two agree
  on ties only when that order is the node order. Among tied nodes an extender scored,
  the pick is uniform at random, as the Randomizer makes it.
The plugins themselves run in the profile's Framework (run_filter_over_nodes,
run_score_plugins); this module decides which nodes, how many, and which one wins.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import structlog

from asched.api import Pod
from asched.extender import EXTENDER_NAME, ExtenderError, Extenders
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import ScoreTable
from asched.scheduler.diagnosis import Diagnosis, FitError, NoNodesAvailable

log = structlog.get_logger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class SchedulingError(Exception):
    """A plugin returned Error: the pod is retried with backoff."""

    def __init__(self, status: Status) -> None:
        self.status = status
        super().__init__(str(status))


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    # The cycle's scores (None when one node was feasible): kept by reference for the
    # inspector, which formats it later (asched.inspector.collector).
    table: ScoreTable | None = None
    # The winner's index in `table` (-1 without a table).
    index: int = -1
    # Opportunistic batching's hint placed the pod: only that node was evaluated.
    hinted: bool = False


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def go_heap_top(totals: npt.NDArray[np.int64]) -> int:
    """The index container/heap.Pop returns after heap.Init on *totals* with kube-scheduler's
    nodeScoreHeap.Less (higher TotalScore first, equal Randomizer).

    heap.Init sifts each element down from the last parent to the root, moving it only
    below a strictly greater child, and prefers the right child only when it is strictly
    greater than the left. So the element ending at the root of a subtree is its own
    root if that holds the subtree's maximum, else the root-to-be of the child subtree
    with the larger maximum (the left one on a tie). Only the positions holding the
    global maximum ("hits") can win, and the rule picks the hit whose root-to-node path
    (left = 0, right = 1) sorts first, a path that is a prefix of another (an ancestor)
    sorting before it. With 1-based positions the path is the bits after the leading 1,
    so left-aligning every hit to the heap's depth and breaking ties by position (the
    ancestor is the smaller number) orders them exactly: a few array operations over the
    hits instead of a sift-down per node.
    """
    best = totals.max()
    hits = np.flatnonzero(totals == best)
    if len(hits) == 1:
        return int(hits[0])
    pos = hits.astype(np.int64) + 1
    depth = len(totals).bit_length()
    bits = np.frexp(pos.astype(np.float64))[1].astype(np.int64)  # bit length, exact < 2**53
    aligned = pos << (depth - bits)
    return int(hits[np.argmin((aligned << depth) | pos)])


class Algorithm:
    """Per-scheduler state of the algorithm: the round-robin start index, and the
    extenders it consults (none by default)."""

    def __init__(
        self,
        percentage_of_nodes_to_score: int,
        extenders: Extenders | None = None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.percentage = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self.extenders = extenders if extenders is not None else Extenders(())
        self._rng = rng or random.Random()

    async def schedule_pod(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        all_nodes: Sequence[NodeInfo],
        *,
        cycle: int = 0,
    ) -> ScheduleResult:
        """Raises FitError (no node fits), NoNodesAvailable, or SchedulingError. `cycle` is
        the queue's scheduling cycle (opportunistic batching reuses the previous cycle's
        ranking only for the next one)."""
        if not all_nodes:
            raise NoNodesAvailable()
        batch = fwk.batch
        signature = fwk.sign_pod(pod) if batch is not None else None
        feasible, diagnosis, hint = await self._find(
            fwk, state, pod, all_nodes, signature=signature, cycle=cycle
        )
        if not feasible:
            raise FitError(pod.key, len(all_nodes), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if len(feasible) == 1:
            chosen = feasible[0].name
            if batch is not None:
                batch.store(signature, hint, chosen, cycle)
            return ScheduleResult(chosen, evaluated, 1, hinted=bool(hint) and hint == chosen)
        table = await self.prioritize(fwk, state, pod, feasible)
        randomized = await self._add_extender_scores(pod, feasible, table)
        i = self.select_index(table, randomized)
        name = table.name_at(i)
        if batch is not None:
            batch.store(signature, hint, name, cycle, scores=table, nodes=feasible)
        return ScheduleResult(name, evaluated, len(feasible), table, i)

    async def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: Pod, all_nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], Diagnosis]:
        feasible, diagnosis, _ = await self._find(fwk, state, pod, all_nodes)
        return feasible, diagnosis

    async def _find(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        all_nodes: Sequence[NodeInfo],
        *,
        signature: bytes | None = None,
        cycle: int = 0,
    ) -> tuple[list[NodeInfo], Diagnosis, str]:
        """findNodesThatFitPod: the feasible nodes, why the others failed, and the node
        hint opportunistic batching gave ("" for none)."""
        diagnosis = Diagnosis()
        pre_res, st, rejectors = await fwk.run_pre_filter(state, pod, all_nodes)
        if st is not None and not st.is_success():
            if not st.is_rejected():
                raise SchedulingError(st)
            # Every node gets the same status, so preemption treats them alike.
            diagnosis.node_to_status.absent = st
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            diagnosis.unschedulable_plugins |= rejectors - diagnosis.pending_plugins
            return [], diagnosis, ""
        # Nodes the PreFilter result excluded were rejected by the narrowing plugins.
        diagnosis.unschedulable_plugins |= rejectors

        hint = ""
        if fwk.batch is not None:
            # Asked even for a nominated pod (which then counts a flush), as Go does.
            hint = await fwk.batch.node_hint(pod, signature, state, cycle)
        first = pod.nominated_node_name or hint
        if first:
            # Preemption made room on the nominated node for this pod, or the previous pod
            # of its batch ranked the hinted node next: try that node first
            # (evaluateNominatedNode). A hinted node that fits ends the search, and the
            # round-robin start stays where it was.
            ni = _node_named(fwk, all_nodes, first)
            allowed_names = None if pre_res is None else pre_res.node_names
            if ni is not None and (allowed_names is None or ni.name in allowed_names):
                nst = await fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
                if (nst is None or nst.is_success()) and await self._nominated_passes_extenders(
                    pod, ni, diagnosis
                ):
                    return [ni], diagnosis, hint

        nodes: Sequence[NodeInfo] = all_nodes
        if pre_res is not None and pre_res.node_names is not None:
            allowed = pre_res.node_names
            nodes = [n for n in all_nodes if n.name in allowed]
            plugins = " ".join(sorted(rejectors))
            diagnosis.node_to_status.absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{plugins}]",),
            )
        processed = 0
        feasible: list[NodeInfo] = []
        if nodes:
            pct = fwk.profile.percentage_of_nodes_to_score
            limit = num_feasible_nodes_to_find(self.percentage if pct is None else pct, len(nodes))
            ext = self.extenders
            if not (fwk.score_plugins or ext.has_filters or ext.has_prioritizers):
                # Nothing would rank or remove a second feasible node
                # (findNodesThatPassFilters).
                limit = 1
            result = await fwk.run_filter_over_nodes(
                state,
                pod,
                nodes,
                start=self.next_start_node_index % len(nodes),
                limit=limit,
                statuses=diagnosis.node_to_status,
            )
            if result.error is not None:
                raise SchedulingError(result.error)
            feasible, processed = result.feasible, result.processed
            # Rejections share a few Status objects; each distinct one adds its plugin.
            for st in diagnosis.node_to_status.distinct():
                diagnosis.add_plugin_status(st)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        if self.extenders and feasible:
            passed = await self._extender_filter(pod, feasible, diagnosis)
            if len(passed) != len(feasible):
                # Extenders register no events: a pod they turned away is retried on any
                # (framework.ExtenderName in UnschedulablePlugins).
                diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
            feasible = passed
        return feasible, diagnosis, hint

    async def _extender_filter(
        self, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        try:
            return await self.extenders.filter(pod, feasible, diagnosis.node_to_status)
        except ExtenderError as exc:
            raise SchedulingError(Status(Code.ERROR, (str(exc),), error=exc)) from exc

    async def _nominated_passes_extenders(
        self, pod: Pod, ni: NodeInfo, diagnosis: Diagnosis
    ) -> bool:
        """evaluateNominatedNode's extender half: an extender failing here is only
        logged, and the search goes on over every node."""
        if not self.extenders:
            return True
        try:
            return bool(await self.extenders.filter(pod, [ni], diagnosis.node_to_status))
        except ExtenderError as exc:
            log.info("nominated_node_evaluation_failed", pod=pod.key, node=ni.name, error=str(exc))
            return False

    async def _add_extender_scores(
        self, pod: Pod, nodes: list[NodeInfo], table: ScoreTable
    ) -> npt.NDArray[np.bool_] | None:
        """prioritizeNodes' extender half: their weighted scores added to the totals.
        Returns which nodes got a score (None without extenders)."""
        if not self.extenders:
            return None
        scores = await self.extenders.prioritize(pod, nodes)
        if not scores.totals:
            return None
        names = [n.name for n in nodes]
        added = np.fromiter((scores.totals.get(n, 0) for n in names), np.int64, len(names))
        base = table.totals_array
        if base is None:
            base = np.asarray(table.totals, dtype=np.int64)
        table.totals_array = base + added
        table.totals = table.totals_array.tolist()
        return np.fromiter((n in scores.totals for n in names), np.bool_, len(names))

    async def prioritize(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> ScoreTable:
        st = await fwk.run_pre_score(state, pod, nodes)
        if st is not None and not st.is_success():
            raise SchedulingError(st)
        table, st = await fwk.run_score_plugins(state, pod, nodes)
        if st is not None:
            raise SchedulingError(st)
        return table

    def select_host(self, table: ScoreTable) -> str:
        return table.name_at(self.select_index(table))

    def select_index(
        self, table: ScoreTable, randomized: npt.NDArray[np.bool_] | None = None
    ) -> int:
        """The highest total; among ties the one kube-scheduler's score heap pops first
        (schedulePod: NewSortedScoredNodes(priorityList).Pop()). A tied node an extender
        scored has a random Randomizer, which beats the 0 of the others: one of those is
        picked uniformly."""
        arr = table.totals_array
        if arr is None:
            arr = np.asarray(table.totals, dtype=np.int64)
        top = arr.max()
        best = np.flatnonzero(arr == top)
        if len(best) == 1:
            return int(best[0])
        if randomized is not None:
            lucky = best[randomized[best]]
            if len(lucky):
                return int(lucky[self._rng.randrange(len(lucky))])
        return go_heap_top(arr)


def _node_named(fwk: Framework, nodes: Sequence[NodeInfo], name: str) -> NodeInfo | None:
    """The node called `name` among `nodes`: a snapshot lookup when `nodes` is the
    snapshot's list (the usual case), else a scan (a pod-group placement's subset)."""
    snapshot = fwk.handle.snapshot
    if nodes is snapshot.node_infos():
        return snapshot.get(name)
    return next((n for n in nodes if n.name == name), None)
