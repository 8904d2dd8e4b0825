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
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import anyio.lowlevel
import numpy as np
import numpy.typing as npt
import structlog

from asched.api import Pod
from asched.extender import EXTENDER_NAME, ExtenderError, Extenders
from asched.framework.batch import as_rows
from asched.framework.columns import NodeRows
from asched.framework.cycle_state import CycleState
from asched.framework.filtering import FilterCheck, chunk_size
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status, excluded_by_pre_filter
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


@dataclass(slots=True)
class Evaluation:
    """What one pass through a pod's scheduling cycle found (Algorithm.evaluate).

    `error` says whether it stopped at an Error; otherwise no node fits when `feasible`
    is empty (`diagnosis` says why, as FitError words it), and `table` holds the scores
    when the feasible nodes were scored.
    """

    state: CycleState
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    # PreFilter's failure: a rejection (it is then every node's status) or an Error.
    pre_filter: Status | None = None
    # The node names PreFilter's result allows (None: every node), and the plugins that
    # narrowed them, sorted; the nodes left out hold diagnosis.node_to_status.absent.
    allowed: AbstractSet[str] | None = None
    narrowed_by: tuple[str, ...] = ()
    feasible: list[NodeInfo] = field(default_factory=list)
    # The first Filter (or extender filter) Error, and the node whose Filter returned it.
    filter_error: Status | None = None
    error_node: str = ""
    # Opportunistic batching's node hint ("" for none).
    hint: str = ""
    # Full evaluation with checks: per node, each Filter pass's per-plugin verdicts.
    checks: dict[str, list[list[FilterCheck]]] = field(default_factory=dict)
    # The scores (None when scoring did not run) and, with extender scores, which nodes
    # an extender scored (select_index breaks their ties at random).
    table: ScoreTable | None = None
    randomized: npt.NDArray[np.bool_] | None = None
    # PreScore's or Score's Error.
    score_error: Status | None = None

    @property
    def error(self) -> Status | None:
        """The Error that ended the evaluation (the scheduler retries the pod), if any."""
        pf = self.pre_filter
        if pf is not None and not pf.is_rejected():
            return pf
        return self.filter_error or self.score_error


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
        ev = await self.evaluate(fwk, state, pod, all_nodes, signature=signature, cycle=cycle)
        if ev.error is not None:
            raise SchedulingError(ev.error)
        feasible, diagnosis, hint = ev.feasible, ev.diagnosis, ev.hint
        if not feasible:
            raise FitError(pod.key, len(all_nodes), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        table = ev.table
        if table is None:
            chosen = feasible[0].name
            if batch is not None:
                batch.store(signature, hint, chosen, cycle)
            return ScheduleResult(chosen, evaluated, 1, hinted=bool(hint) and hint == chosen)
        i = self.select_index(table, ev.randomized)
        name = table.name_at(i)
        if batch is not None:
            batch.store(signature, hint, name, cycle, scores=table, nodes=feasible)
        return ScheduleResult(name, evaluated, len(feasible), table, i)

    async def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: Pod, all_nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], Diagnosis]:
        """findNodesThatFitPod alone (no scoring); raises SchedulingError on an Error."""
        ev = Evaluation(state)
        await self._find(ev, fwk, pod, all_nodes, full=False, checks=False)
        if ev.error is not None:
            raise SchedulingError(ev.error)
        return ev.feasible, ev.diagnosis

    async def evaluate(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        full: bool = False,
        checks: bool = False,
        signature: bytes | None = None,
        cycle: int = 0,
    ) -> Evaluation:
        """The scheduling cycle's steps for `pod` up to choosing a node: PreFilter, Filter
        (and the extenders' filters), PreScore and Score (and the extenders' scores).
        Plugin errors are returned in the Evaluation, never raised.

        By default it is the scheduler's cycle (schedulePod): the nominated node or the
        batching hint first, the sampled number of feasible nodes from the round-robin
        start (which it advances), and no scoring when one node fits.

        `full=True` is the complete answer `asched explain` and asched.testing show: every
        node the PreFilter result allows is filtered from the first, with no shortcut and
        no sampling, the round robin is left alone, and the feasible nodes are scored even
        when only one fits. `checks=True` (full only) also runs every Filter plugin on
        every node, those PreFilter left out included, and keeps each plugin's own verdict
        per pass in `Evaluation.checks`; the node's verdict is still the first rejection
        in profile order, and an Error on one node does not stop the others (node by
        node, without the columnar pass)."""
        assert full or not checks, "checks is a full evaluation"
        ev = Evaluation(state)
        await self._find(
            ev, fwk, pod, nodes, full=full, checks=checks, signature=signature, cycle=cycle
        )
        feasible = ev.feasible
        if ev.pre_filter is not None or (ev.filter_error is not None and not checks):
            return ev
        if len(feasible) > 1 or (full and feasible):
            st = await fwk.run_pre_score(state, pod, feasible)
            if st is not None and not st.is_success():
                ev.score_error = st
                return ev
            table, st = await fwk.run_score_plugins(state, pod, feasible)
            if st is not None:
                ev.score_error = st
                return ev
            ev.randomized = await self._add_extender_scores(pod, feasible, table)
            ev.table = table
        return ev

    async def _find(
        self,
        ev: Evaluation,
        fwk: Framework,
        pod: Pod,
        all_nodes: Sequence[NodeInfo],
        *,
        full: bool,
        checks: bool,
        signature: bytes | None = None,
        cycle: int = 0,
    ) -> None:
        """findNodesThatFitPod into `ev`: the feasible nodes, why the others failed, and
        the node hint opportunistic batching gave ("" for none)."""
        state, diagnosis = ev.state, ev.diagnosis
        pre_res, st, rejectors = await fwk.run_pre_filter(state, pod, all_nodes)
        if st is not None and not st.is_success():
            ev.pre_filter = st
            if st.is_rejected():
                # Every node gets the same status, so preemption treats them alike.
                diagnosis.node_to_status.absent = st
                diagnosis.pre_filter_msg = st.message()
                diagnosis.add_plugin_status(st)
                diagnosis.unschedulable_plugins |= rejectors - diagnosis.pending_plugins
            return
        # Nodes the PreFilter result excluded were rejected by the narrowing plugins.
        diagnosis.unschedulable_plugins |= rejectors
        allowed = None if pre_res is None else pre_res.node_names

        if not full:
            if fwk.batch is not None:
                # Asked even for a nominated pod (which then counts a flush), as Go does.
                ev.hint = await fwk.batch.node_hint(pod, signature, state, cycle)
            first = pod.nominated_node_name or ev.hint
            if first:
                # Preemption made room on the nominated node for this pod, or the previous
                # pod of its batch ranked the hinted node next: try that node first
                # (evaluateNominatedNode). A hinted node that fits ends the search, and the
                # round-robin start stays where it was.
                ni = _node_named(fwk, all_nodes, first)
                if ni is not None and (allowed is None or ni.name in allowed):
                    nst = await fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
                    if (nst is None or nst.is_success()) and await self._nominated_passes_extenders(
                        pod, ni, diagnosis
                    ):
                        ev.feasible = [ni]
                        return

        nodes: Sequence[NodeInfo] = all_nodes
        if allowed is not None:
            ev.allowed = allowed
            ev.narrowed_by = tuple(sorted(rejectors))
            diagnosis.node_to_status.absent = excluded_by_pre_filter(rejectors)
            if not checks:
                nodes = _narrowed(all_nodes, allowed)
        processed = 0
        if checks:
            await _filter_each(ev, fwk, pod, nodes)
        elif nodes:
            if full:
                start, limit = 0, len(nodes)
            else:
                pct = fwk.profile.percentage_of_nodes_to_score
                start = self.next_start_node_index % len(nodes)
                limit = num_feasible_nodes_to_find(
                    self.percentage if pct is None else pct, len(nodes)
                )
                ext = self.extenders
                if not (fwk.score_plugins or ext.has_filters or ext.has_prioritizers):
                    # Nothing would rank or remove a second feasible node
                    # (findNodesThatPassFilters).
                    limit = 1
            result = await fwk.run_filter_over_nodes(
                state, pod, nodes, start=start, limit=limit, statuses=diagnosis.node_to_status
            )
            if result.error is not None:
                ev.filter_error = result.error
                # The pass stopped at the node that returned it.
                ev.error_node = nodes[(start + result.processed - 1) % len(nodes)].name
                return
            ev.feasible, processed = result.feasible, result.processed
            # Rejections share a few Status objects; each distinct one adds its plugin.
            for st in diagnosis.node_to_status.distinct():
                diagnosis.add_plugin_status(st)
        if not full:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        if self.extenders and ev.feasible:
            try:
                passed = await self.extenders.filter(pod, ev.feasible, diagnosis.node_to_status)
            except ExtenderError as exc:
                ev.filter_error = Status(Code.ERROR, (str(exc),), error=exc)
                return
            if len(passed) != len(ev.feasible):
                # Extenders register no events: a pod they turned away is retried on any
                # (framework.ExtenderName in UnschedulablePlugins).
                diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
            ev.feasible = passed

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


def _narrowed(nodes: Sequence[NodeInfo], allowed: AbstractSet[str]) -> Sequence[NodeInfo]:
    """The nodes PreFilter's result allows, in order; still a NodeRows when `nodes` is one
    (the snapshot's list), so the Filter pass stays columnar."""
    keep = [i for i, ni in enumerate(nodes) if ni.name in allowed]
    rows = as_rows(nodes)
    if rows is None:
        return [nodes[i] for i in keep]
    picked = rows.rows[np.asarray(keep, dtype=np.int64)]
    return NodeRows([nodes[i] for i in keep], rows.columns, picked)


async def _filter_each(ev: Evaluation, fwk: Framework, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
    """Every Filter plugin on every node, node by node, each plugin's verdicts kept
    (RunFilterPluginsWithNominatedPods with checks); yields to the event loop every chunk
    of nodes. Nodes PreFilter left out are filtered for their checks but keep the
    exclusion status."""
    statuses = ev.diagnosis.node_to_status
    allowed = ev.allowed
    chunk = chunk_size(len(nodes))
    for i, ni in enumerate(nodes):
        passes: list[list[FilterCheck]] = []
        st = await fwk.run_filter_plugins_with_nominated_pods(ev.state, pod, ni, checks=passes)
        ev.checks[ni.name] = passes
        if allowed is None or ni.name in allowed:
            if st is None:
                ev.feasible.append(ni)
            else:
                statuses.set(ni.name, st)
                ev.diagnosis.add_plugin_status(st)
                if st.code == Code.ERROR and ev.filter_error is None:
                    ev.filter_error, ev.error_node = st, ni.name
        if (i + 1) % chunk == 0:
            await anyio.lowlevel.checkpoint()
