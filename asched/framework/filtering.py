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

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio.lowlevel

from asched.api import Pod
from asched.framework.batch import BatchPlugins, as_rows, filter_pass
from asched.framework.columns import Unbatchable
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
                st = st.with_plugin(name)
                if not st.is_rejected():
                    # Filter plugins may only pass or reject (RunFilterPlugins).
                    st = wrap_error(f'running "{name}" filter plugin', st)
                if checks is None:
                    return st
                first = first or st
                checks.append((name, st))
            elif checks is not None:
                checks.append((name, None))
        return first

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
        feasible: list[NodeInfo] = []
        if n == 0:
            return FilterPass(feasible, 0)
        fns = self.fns(state)
        rows = as_rows(nodes) if self._columnar() else None
        if rows is not None and not self._services.has_nominated_pods():
            names = [f[0] for f in fns]
            if self._batch.covers_filters(names):
                try:
                    return filter_pass(
                        self._batch,
                        names,
                        state,
                        pod,
                        rows,
                        start=start,
                        limit=limit,
                        statuses=statuses,
                    )
                except Unbatchable:
                    pass  # filter_pass writes no status before it succeeds
                except Exception:
                    # A bug in a batch Filter: the per-node path below gives the exact
                    # statuses (an Error, if the per-node Filter fails too).
                    self._crashed(point="BatchFilter", pod=pod.key)
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

    def _nominated_nodes(self, nodes: Sequence[NodeInfo]) -> set[str]:
        # Cheap check first: most clusters have no nominated pods at all.
        if not self._services.has_nominated_pods():
            return set()
        return {ni.name for ni in nodes if self._services.nominated_pods_for_node(ni.name)}
