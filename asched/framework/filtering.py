"""Filter for one profile: RunFilterPlugins, the two passes with nominated pods, and the
pass over a run of nodes (kube-scheduler findNodesThatPassFilters).

The pass over nodes takes the columnar path (asched/framework/batch.py) when every Filter
plugin left for the pod has a batch form and no pod is nominated anywhere; otherwise it
runs the plugins node by node, in chunks of about sqrt(n) nodes that yield to the event
loop, with the two passes on nodes that hold nominated pods. Both paths give the same
feasible nodes, processed count and per-node statuses (tests/unit/framework/
test_columns_agree.py). The Framework (runtime.py) owns one Filterer and counts the
evaluations for the metrics.
"""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio.lowlevel
import numpy as np

from asched.api import Pod
from asched.framework.batch import (
    NONE,
    BatchPlugins,
    Verdicts,
    all_batch_pass,
    as_rows,
    nodes_at,
    rotated,
)
from asched.framework.columns import Bools, Int64s, NodeColumns, NodeRows, Unbatchable
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.services import SchedulerServices
from asched.framework.status import Code, Status, error, wrap_error
from asched.framework.types import FilterPass, NodeToStatus

FilterFn = Callable[[CycleState, Pod, NodeInfo], "Status | Awaitable[Status | None] | None"]
# One Filter check: the plugin's name and its verdict (None is Success).
FilterCheck = tuple[str, "Status | None"]
# Runs the PreFilter extensions' AddPod for a nominated pod on a cloned node.
AddPod = Callable[[CycleState, Pod, Pod, NodeInfo], "Status | None"]
# Called inside `except` with where it happened: logs the stack and counts the bug.
Crashed = Callable[..., None]
# Nodes filtered between two yields to the event loop: informers and binding cycles run
# in between, and no chunk of Filter calls holds the loop for long (parallelism.go chunks).
MIN_CHUNK = 32


def chunk_size(n: int) -> int:
    """About sqrt(n) nodes per chunk, never fewer than MIN_CHUNK."""
    return max(int(n**0.5), MIN_CHUNK)


class Filterer:
    """Runs a profile's Filter plugins, for one node or a run of nodes."""

    def __init__(
        self,
        filters: list[tuple[str, FilterFn, bool]],
        *,
        batch: BatchPlugins,
        services: SchedulerServices,
        columnar: Callable[[], bool],
        crashed: Crashed,
        add_pod: AddPod,
    ) -> None:
        """`filters` are (name, filter method, is a coroutine) in profile order; `columnar`
        is read per pass, so the Framework's switch takes effect at once."""
        self._filters = filters
        self._batch = batch
        self._services = services
        self._columnar = columnar
        self._crashed = crashed
        self._add_pod = add_pod

    @property
    def has_async(self) -> bool:
        return any(is_async for _, _, is_async in self._filters)

    def fns(self, state: CycleState) -> list[tuple[str, FilterFn, bool]]:
        """The Filter plugins to run for this pod (minus those PreFilter skipped)."""
        skip = state.skip_filter_plugins
        return [f for f in self._filters if f[0] not in skip]

    async def run(
        self,
        fns: Sequence[tuple[str, FilterFn, bool]],
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        checks: list[FilterCheck] | None,
    ) -> Status | None:
        """The one Filter loop (RunFilterPlugins): the first non-success status wins.

        With `checks`, every plugin runs and its own verdict is appended (for
        `asched explain`); the returned status is still the first rejection.
        """
        first: Status | None = None
        for name, fn, is_async in fns:
            try:
                res: Any = fn(state, pod, node_info)
                st: Status | None = (await res) if is_async else res
            except Exception as exc:
                self._crashed(plugin=name, point="Filter", pod=pod.key, node=node_info.name)
                st = error(exc, name)
            if st is not None and st.code != Code.SUCCESS:
                st = _labelled(name, st)
                if checks is None:
                    return st
                first = first or st
                checks.append((name, st))
            elif checks is not None:
                checks.append((name, None))
        return first

    def run_now(
        self,
        fns: Sequence[tuple[str, FilterFn, bool]],
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
    ) -> Status | None:
        """`run` for plugins none of which is a coroutine, without checks: the mixed
        pass's loop calls it once per node and must not pay for a coroutine each time."""
        for name, fn, _ in fns:
            try:
                st: Any = fn(state, pod, node_info)
            except Exception as exc:
                self._crashed(plugin=name, point="Filter", pod=pod.key, node=node_info.name)
                st = error(exc, name)
            if st is not None and st.code != Code.SUCCESS:
                return _labelled(name, st)
        return None

    async def with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        checks: list[list[FilterCheck]] | None = None,
    ) -> Status | None:
        """Filter with the node's nominated pods of equal or higher priority counted.

        kube-scheduler runs Filter twice when such pods exist (RunFilterPluginsWithNominatedPods):
        once with them added (they may take the resources first) and once without (pod
        affinity that only the nominated pods satisfy must not count). With `checks`,
        each pass appends its list of per-plugin verdicts.
        """
        fns = self.fns(state)
        passes: list[tuple[CycleState, NodeInfo]] = []
        nominated = [
            p
            for p in self._services.nominated_pods_for_node(node_info.name)
            if p.uid != pod.uid and p.priority >= pod.priority
        ]
        if nominated:
            state2 = state.clone()
            ni2 = node_info.clone()
            for p in nominated:
                ni2.add_pod(p)
                st = self._add_pod(state2, pod, p, ni2)
                if st is not None and not st.is_success():
                    return st
            passes.append((state2, ni2))
        passes.append((state, node_info))
        verdict: Status | None = None
        for pass_state, pass_node in passes:
            pass_checks: list[FilterCheck] | None = None if checks is None else []
            st = await self.run(fns, pass_state, pod, pass_node, pass_checks)
            if checks is not None and pass_checks is not None:
                checks.append(pass_checks)
            if st is not None:
                if checks is None:
                    return st
                verdict = verdict or st
        return verdict

    async def over_nodes(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        start: int,
        limit: int,
        statuses: NodeToStatus,
    ) -> FilterPass:
        """Filter nodes from `start` round the list until `limit` fit or all were seen.

        kube-scheduler's findNodesThatPassFilters: rejections go into `statuses`; the
        first Error ends the pass. Nodes with nominated pods take the two-pass path; the
        others run the plugins directly. Yields to the event loop every chunk of nodes.
        """
        n = len(nodes)
        if n == 0:
            return FilterPass([], 0)
        fns = self.fns(state)
        rows = as_rows(nodes) if self._columnar() else None
        if rows is not None:
            return await self._over_rows(
                state, pod, rows, fns, start=start, limit=limit, statuses=statuses
            )
        return await self._node_by_node(
            state, pod, nodes, fns, start=start, limit=limit, statuses=statuses
        )

    async def _node_by_node(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        fns: Sequence[tuple[str, FilterFn, bool]],
        *,
        start: int,
        limit: int,
        statuses: NodeToStatus,
    ) -> FilterPass:
        """Every plugin node by node: the reference the columnar pass must equal."""
        n = len(nodes)
        feasible: list[NodeInfo] = []
        if not fns:
            return FilterPass([nodes[(start + i) % n] for i in range(min(limit, n))], min(limit, n))
        nominated = self._nominated_nodes(nodes)
        chunk = chunk_size(n)
        processed = 0
        for i in range(n):
            ni = nodes[(start + i) % n]
            processed += 1
            if nominated and ni.name in nominated:
                st = await self.with_nominated_pods(state, pod, ni)
            else:
                st = await self.run(fns, state, pod, ni, None)
            if st is None:
                feasible.append(ni)
                if len(feasible) >= limit:
                    break
            elif st.code == Code.ERROR:
                return FilterPass(feasible, processed, st)
            else:
                statuses.set(ni.name, st)
            if (i + 1) % chunk == 0:
                await anyio.lowlevel.checkpoint()
        return FilterPass(feasible, processed)

    async def _over_rows(
        self,
        state: CycleState,
        pod: Pod,
        nodes: NodeRows,
        fns: Sequence[tuple[str, FilterFn, bool]],
        *,
        start: int,
        limit: int,
        statuses: NodeToStatus,
    ) -> FilterPass:
        """The snapshot's nodes: batch plugins answer from the columns, the others run
        node by node only where a batch plugin leaves the answer open."""
        cols = nodes.columns
        verdicts = Verdicts(cols, rotated(nodes.rows, start))
        per_node: list[int] = []  # indexes into fns, in profile order
        for index, (name, _, _) in enumerate(fns):
            plugin = self._batch.filters.get(name)
            if plugin is None:
                per_node.append(index)
                continue
            try:
                v = plugin.filter_batch(state, pod, cols, verdicts.rows)
            except Unbatchable:
                per_node.append(index)  # not for this pod: its per-node form answers
                continue
            except Exception:
                # A bug in a batch form: its per-node form gives the exact statuses (an
                # Error, if that fails too).
                self._crashed(point="BatchFilter", plugin=name, pod=pod.key)
                per_node.append(index)
                continue
            if v is not None:
                verdicts.add(index, name, v)
        # No Filter plugin: every node fits, nominated pods or not (findNodesThatPassFilters).
        nominated = self._nominated_positions(cols, verdicts.rows) if fns else None
        if not per_node and nominated is None:
            try:
                return all_batch_pass(verdicts, limit=limit, statuses=statuses)
            except Exception:
                # A status_at that failed: all_batch_pass wrote nothing; start again
                # node by node.
                self._crashed(point="BatchFilter", pod=pod.key)
                return await self._node_by_node(
                    state, pod, nodes, fns, start=start, limit=limit, statuses=statuses
                )
        return await MixedPass(
            self,
            state=state,
            pod=pod,
            fns=fns,
            verdicts=verdicts,
            per_node=per_node,
            nominated=nominated,
        ).run(limit, statuses)

    def _nominated_positions(self, cols: NodeColumns, rows: Int64s) -> Bools | None:
        """Which positions hold nodes with nominated pods; None when none do."""
        if not self._services.has_nominated_pods():
            return None
        names = cols.names
        found = np.fromiter(
            (bool(self._services.nominated_pods_for_node(names[r])) for r in rows.tolist()),
            dtype=np.bool_,
            count=len(rows),
        )
        return found if found.any() else None

    def _nominated_nodes(self, nodes: Sequence[NodeInfo]) -> set[str]:
        # Cheap check first: most clusters have no nominated pods at all.
        if not self._services.has_nominated_pods():
            return set()
        return {ni.name for ni in nodes if self._services.nominated_pods_for_node(ni.name)}


class MixedPass:
    """One pod's Filter pass over the snapshot's nodes when some Filter plugins run node
    by node (no batch form, or not for this pod) or some nodes hold nominated pods.

    Positions are the round-robin order. A position is *work* when Python must look at
    it: a per-node plugin still has to run before any batch plugin's rejection counts
    (plugins answer in profile order), or its node holds nominated pods (kube-scheduler's
    two passes, RunFilterPluginsWithNominatedPods, every plugin in its per-node form).
    Every other position is decided by the batch verdicts alone: feasible, or rejected by
    its first rejecting batch plugin. The work positions are visited in order and the
    others counted in bulk between them, so the pass stops at the same node, with the same
    `processed` and statuses, as findNodesThatPassFilters run node by node.
    """

    def __init__(
        self,
        filterer: Filterer,
        *,
        state: CycleState,
        pod: Pod,
        fns: Sequence[tuple[str, FilterFn, bool]],
        verdicts: Verdicts,
        per_node: list[int],
        nominated: Bools | None,
    ) -> None:
        self._f = filterer
        self._state = state
        self._pod = pod
        self._fns = fns
        self._verdicts = verdicts
        self._per_node = per_node
        self._nominated = nominated
        # The per-node plugins that come before plugin index i, by i (a handful of i).
        self._before: dict[int, list[tuple[str, FilterFn, bool]]] = {}

    def _plugins_before(self, index: int) -> list[tuple[str, FilterFn, bool]]:
        got = self._before.get(index)
        if got is None:
            got = self._before[index] = [self._fns[i] for i in self._per_node if i < index]
        return got

    async def _one(self, k: int, at: int, ni: NodeInfo, nominated: bool) -> Status | None:
        """One position's per-node verdict (before the batch rejection at `at`, if any)."""
        f = self._f
        if nominated:
            return await f.with_nominated_pods(self._state, self._pod, ni)
        return await f.run(self._plugins_before(at), self._state, self._pod, ni, None)

    async def run(self, limit: int, statuses: NodeToStatus) -> FilterPass:
        v = self._verdicts
        cols, rows = v.cols, v.rows
        n = len(rows)
        first = v.first()
        first_per_node = self._per_node[0] if self._per_node else NONE
        work = first > first_per_node
        if self._nominated is not None:
            work |= self._nominated
        # Feasible without a look: no batch plugin rejects and no per-node plugin runs.
        auto = ~work & (first == NONE)
        # Plain lists: this loop runs per node, where numpy scalars cost more than ints.
        # auto_upto[k]: auto-feasible positions in [0, k); None when there are none.
        auto_upto = np.concatenate(([0], np.cumsum(auto))).tolist() if auto.any() else None
        rows_l, first_l = rows.tolist(), first.tolist()
        infos, names = cols.infos, cols.names
        f, state, pod = self._f, self._state, self._pod
        sync = not any(self._fns[i][2] for i in self._per_node)
        run_now, plugins_before = f.run_now, self._plugins_before
        every = plugins_before(NONE)  # what a node no batch plugin rejects must pass
        feasible: list[int] = []
        count = 0  # feasible so far, auto ones included
        prev = 0  # positions before this are accounted for
        processed = n
        error: Status | None = None
        chunk = chunk_size(n)
        stop: int | None = None
        nominated_at = (
            frozenset(np.flatnonzero(self._nominated).tolist())
            if self._nominated is not None
            else frozenset()
        )
        work_l = np.flatnonzero(work).tolist()
        done = False
        for at_chunk in range(0, len(work_l), chunk):
            ks = work_l[at_chunk : at_chunk + chunk]
            # A chunk's verdicts first, in one comprehension: the per-node plugins are the
            # cost here, and Filter has no side effects, so verdicts past the node that
            # ends the pass are computed and dropped (findNodesThatPassFilters, too,
            # evaluates a whole parallel chunk before it stops).
            if sync and not nominated_at:
                verdicts = [
                    run_now(
                        every if first_l[k] == NONE else plugins_before(first_l[k]),
                        state,
                        pod,
                        infos[rows_l[k]],
                    )
                    for k in ks
                ]
            else:
                verdicts = [
                    await self._one(k, first_l[k], infos[rows_l[k]], k in nominated_at) for k in ks
                ]
            for k, own in zip(ks, verdicts, strict=True):
                if auto_upto is not None:
                    stop = _limit_in(auto_upto, prev, k, limit - count)
                    if stop is not None:
                        done = True
                        break
                    count += auto_upto[k] - auto_upto[prev]
                    prev = k + 1
                at = first_l[k]
                st = own
                if own is None and at != NONE and k not in nominated_at:
                    st = v.status_at(k, at)
                if st is None:
                    feasible.append(k)
                    count += 1
                    if count >= limit:
                        processed = k + 1
                        done = True
                        break
                elif st.code == Code.ERROR:
                    processed, error = k + 1, st
                    done = True
                    break
                else:
                    statuses.set(names[rows_l[k]], st)
            if done:
                break
            await anyio.lowlevel.checkpoint()
        else:
            if auto_upto is not None:
                stop = _limit_in(auto_upto, prev, n, limit - count)
        if stop is not None:
            processed = stop + 1
        v.label(~work[:processed] & (first[:processed] != NONE), statuses)
        found = np.flatnonzero(auto[:processed])
        if feasible:
            found = np.sort(np.concatenate((found, np.asarray(feasible, dtype=np.int64))))
        return FilterPass(nodes_at(cols, rows[found]), processed, error)


def _limit_in(auto_upto: list[int], lo: int, hi: int, need: int) -> int | None:
    """The position in [lo, hi) whose auto-feasible node is the `need`-th there, or None
    when fewer than `need` are."""
    if auto_upto[hi] - auto_upto[lo] < need:
        return None
    # auto_upto[p + 1] counts positions [0, p]: the first p reaching the target.
    return bisect.bisect_left(auto_upto, auto_upto[lo] + need) - 1


def _labelled(name: str, st: Status) -> Status:
    """A Filter plugin's non-success status, named after it; anything but a rejection is
    an Error (RunFilterPlugins: Filter plugins may only pass or reject)."""
    st = st.with_plugin(name)
    if not st.is_rejected():
        st = wrap_error(f'running "{name}" filter plugin', st)
    return st
