"""Finding and ranking nodes for one pod: kube-scheduler's schedulePod, in Python.

- Node sampling (numFeasibleNodesToFind): all nodes under 100; otherwise the configured
  percentage, or adaptive max(50 - N/125, 5)%, and never fewer than 100 nodes.
- Filtering starts where the previous cycle stopped (round robin) and stops early once
  enough feasible nodes are found, so every node gets its turn.
- The fan-out runs in chunks of about sqrt(N) nodes and yields to the event loop between
  chunks (informers and binding cycles keep running); no task per node.
- A pod with a nominated node (from preemption) tries that node first.
- Scoring is skipped when one node is feasible; the best total wins, ties at random.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import cast

import anyio

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.types import NodeScore
from asched.scheduler.diagnosis import Diagnosis, FitError, NoNodesAvailable

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MIN_CHUNK = 32


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


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def chunk_size(n: int) -> int:
    return max(int(math.sqrt(n)), MIN_CHUNK)


class Algorithm:
    """Per-scheduler state of the algorithm: the round-robin start index."""

    def __init__(self, percentage_of_nodes_to_score: int, rng: random.Random | None = None) -> None:
        self.percentage = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self._rng = rng or random.Random()

    async def schedule_pod(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        all_nodes: Sequence[NodeInfo],
        get_node: dict[str, NodeInfo] | None = None,
    ) -> ScheduleResult:
        """Raises FitError (no node fits), NoNodesAvailable, or SchedulingError."""
        if not all_nodes:
            raise NoNodesAvailable()
        feasible, diagnosis = await self.find_nodes_that_fit(fwk, state, pod, all_nodes)
        if not feasible:
            raise FitError(pod.key, len(all_nodes), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        scores = await self.prioritize(fwk, state, pod, feasible)
        return ScheduleResult(self.select_host(scores), evaluated, len(feasible))

    async def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: Pod, all_nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], Diagnosis]:
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
            return [], diagnosis
        # Nodes the PreFilter result excluded were rejected by the narrowing plugins.
        diagnosis.unschedulable_plugins |= rejectors

        if pod.nominated_node_name:
            # Preemption made room on this node for this pod: try it first.
            ni = next((n for n in all_nodes if n.name == pod.nominated_node_name), None)
            allowed_names = None if pre_res is None else pre_res.node_names
            if ni is not None and (allowed_names is None or ni.name in allowed_names):
                nst = await fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
                if nst is None or nst.is_success():
                    return [ni], diagnosis

        nodes: Sequence[NodeInfo] = all_nodes
        if pre_res is not None and pre_res.node_names is not None:
            allowed = pre_res.node_names
            nodes = [n for n in all_nodes if n.name in allowed]
            plugins = " ".join(sorted(rejectors))
            diagnosis.node_to_status.absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{plugins}]",),
            )
        feasible = await self._pass_filters(fwk, state, pod, diagnosis, nodes)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    async def _pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
    ) -> list[NodeInfo]:
        n = len(nodes)
        if n == 0:
            return []
        pct = fwk.profile.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(self.percentage if pct is None else pct, n)
        start = self.next_start_node_index % n
        fns = fwk.filter_fns(state)
        if not fns:
            return [nodes[(start + i) % n] for i in range(to_find)]
        # The plain-function path is taken unless a plugin is async or nominated pods
        # must be accounted for on some node.
        fast = not fwk.has_async_filters() and not _any_nominated(fwk, pod, nodes)
        feasible: list[NodeInfo] = []
        chunk = chunk_size(n)
        statuses = diagnosis.node_to_status
        for i in range(n):
            ni = nodes[(start + i) % n]
            if fast:
                st = fwk.run_filter_plugins_sync(state, pod, ni, fns)
            else:
                st = await fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if st is None:
                feasible.append(ni)
                if len(feasible) >= to_find:
                    break
            elif st.code == Code.ERROR:
                raise SchedulingError(st)
            else:
                statuses.set(ni.name, st)
                diagnosis.add_plugin_status(st)
            if (i + 1) % chunk == 0:
                await anyio.lowlevel.checkpoint()
        return feasible

    async def prioritize(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[NodeScore]:
        st = await fwk.run_pre_score(state, pod, nodes)
        if st is not None and not st.is_success():
            raise SchedulingError(st)
        start = time.perf_counter()
        fns = fwk.score_fns(state)
        totals = [NodeScore(ni.name, 0) for ni in nodes]
        if not fns:
            for t in totals:
                t.score = 1
            return totals
        # Plugin-major: one comprehension per plugin over the nodes, yielding to the loop
        # between plugins (a plugin over a few hundred nodes is well under a millisecond).
        per_plugin: dict[str, list[NodeScore]] = {}
        for name, fn, is_async in fns:
            try:
                if is_async:
                    afn = cast(Callable[[CycleState, Pod, NodeInfo], Awaitable[int]], fn)
                    scores = [NodeScore(ni.name, int(await afn(state, pod, ni))) for ni in nodes]
                else:
                    sfn = cast(Callable[[CycleState, Pod, NodeInfo], int], fn)
                    scores = [NodeScore(ni.name, sfn(state, pod, ni)) for ni in nodes]
            except Exception as exc:
                err = Status(Code.ERROR, (str(exc),), name, exc)
                fwk.record_point("Score", err, start)
                raise SchedulingError(err) from exc
            per_plugin[name] = scores
            await anyio.lowlevel.checkpoint()
        st = fwk.normalize_and_weigh(state, pod, per_plugin)
        fwk.record_point("Score", st, start)
        if st is not None:
            raise SchedulingError(st)
        for scores in per_plugin.values():
            for i, ns in enumerate(scores):
                totals[i].score += ns.score
        return totals

    def select_host(self, scores: list[NodeScore]) -> str:
        """The highest total; ties broken uniformly at random."""
        top = max(ns.score for ns in scores)
        ties = [ns.name for ns in scores if ns.score == top]
        return ties[0] if len(ties) == 1 else self._rng.choice(ties)


def _any_nominated(fwk: Framework, pod: Pod, nodes: Sequence[NodeInfo]) -> bool:
    # Cheap check first: most clusters have no nominated pods at all.
    if not fwk.has_nominated_pods():
        return False
    return any(fwk.nominated_pods_for_node(ni.name) for ni in nodes)
