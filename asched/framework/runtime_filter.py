"""The filtering side of the framework runtime: PreEnqueue, QueueSort, PreFilter (and its
AddPod/RemovePod extensions), Filter and PostFilter.

Follows kube-scheduler's frameworkImpl RunPreEnqueuePlugins, RunPreFilterPlugins,
RunFilterPlugins(WithNominatedPods), RunPreFilterExtensionAddPod/RemovePod and
RunPostFilterPlugins; the per-node Filter loop itself is asched.framework.filtering.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.client.protocol import REQUEST_ERRORS
from asched.framework.cycle_state import CycleState
from asched.framework.evaluations import filter_evaluations
from asched.framework.filtering import FilterCheck, Filterer, FilterFn
from asched.framework.interfaces import (
    AsyncFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    QueueSortPlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime_base import RuntimeBase
from asched.framework.status import Code, Status, error, wrap_error
from asched.framework.types import (
    FilterPass,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)


class FilterRunner(RuntimeBase):
    """Runs the extension points that decide where (and whether) a pod may go."""

    pre_enqueue_plugins: list[PreEnqueuePlugin]
    queue_sort: QueueSortPlugin
    pre_filter_plugins: list[PreFilterPlugin]
    filter_plugins: list[FilterPlugin | AsyncFilterPlugin]
    post_filter_plugins: list[PostFilterPlugin]
    _filterer: Filterer

    # ---- PreEnqueue / QueueSort ----------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> tuple[str, Status] | None:
        for p in self.pre_enqueue_plugins:
            try:
                st = p.pre_enqueue(pod)
            except Exception as exc:
                self._crashed(plugin=p.name, point="PreEnqueue", pod=pod.key)
                return p.name, error(exc, p.name)
            if st is not None and not st.is_success():
                return p.name, st.with_plugin(p.name)
        return None

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    # ---- PreFilter / Filter ------------------------------------------------------
    async def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Returns (merged result, the failure, plugins that narrowed the nodes)."""
        start = time.perf_counter()
        result: PreFilterResult | None = None
        rejectors: set[str] = set()
        status: Status | None = None
        for p in self.pre_filter_plugins:
            t = time.perf_counter()
            try:
                out: Any = p.pre_filter(state, pod, nodes)
                # An async PreFilter (allowed, see interfaces); a sync one returns a tuple,
                # checked first because isawaitable is costly on the per-pod path.
                if type(out) is not tuple and inspect.isawaitable(out):
                    out = await out
                r, st = out
            except Exception as exc:
                self._crashed(plugin=p.name, point="PreFilter", pod=pod.key)
                status = wrap_error(f'running PreFilter plugin "{p.name}"', error(exc, p.name))
                break
            self._plugin(p.name, "PreFilter", st, t)
            if st is None or st.code != Code.SKIP:
                self._evaluated(p.name, "PreFilter", 1)
            if st is not None and st.code == Code.SKIP:
                state.skip_filter_plugins.add(p.name)
                continue
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                if st.code == Code.UNSCHEDULABLE:
                    # Preemption may help, and it needs every PreFilter's state: the rest
                    # still run, and the last Unschedulable is the answer
                    # (RunPreFilterPlugins, kubernetes#119770).
                    continue
                if st.is_rejected():
                    # Unresolvable (or asched's Pending): stop here. kube-scheduler then
                    # reports no narrowing plugins; the status names its own plugin.
                    rejectors = set()
                else:
                    status = wrap_error(f'running PreFilter plugin "{p.name}"', status)
                break
            if r is not None and r.node_names is not None:
                # Plugins that narrowed the node set are the "rejectors" of the nodes
                # they left out (kube-scheduler's pluginsWithNodes).
                rejectors.add(p.name)
                result = r if result is None else result.merge(r)
                if result.node_names is not None and not result.node_names:
                    names = sorted(rejectors)
                    msg = (
                        f"node(s) didn't satisfy plugin {names[0]}"
                        if len(names) == 1
                        else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    )
                    status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), p.name)
                    break
        self._point("PreFilter", status, start)
        return result, status, rejectors

    def has_async_filters(self) -> bool:
        return self._filterer.has_async

    def filter_fns(self, state: CycleState) -> list[tuple[str, FilterFn, bool]]:
        """The Filter plugins to run for this pod (minus those PreFilter skipped)."""
        return self._filterer.fns(state)

    async def run_filter_plugins(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        return await self._filterer.run(self.filter_fns(state), state, pod, node_info, None)

    async def run_filter_plugins_with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        checks: list[list[FilterCheck]] | None = None,
    ) -> Status | None:
        """Filter with the node's nominated pods of equal or higher priority counted
        (RunFilterPluginsWithNominatedPods; filtering.py)."""
        return await self._filterer.with_nominated_pods(state, pod, node_info, checks)

    async def run_filter_over_nodes(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        start: int,
        limit: int,
        statuses: NodeToStatus,
    ) -> FilterPass:
        """Filterer.over_nodes, counted in scheduler_plugin_evaluation_total."""
        m = self._services.metrics
        before = {} if m is None else {k: n for k, (_, n) in statuses.tally_by_id().items()}
        result = await self._filterer.over_nodes(
            state, pod, nodes, start=start, limit=limit, statuses=statuses
        )
        if m is not None:
            names = [name for name, _, _ in self.filter_fns(state)]
            rejected = [
                (st, n - before.get(k, 0))
                for k, (st, n) in statuses.tally_by_id().items()
                if n > before.get(k, 0)
            ]
            if result.error is not None:
                rejected.append((result.error, 1))
            for name, count in filter_evaluations(names, len(result.feasible), rejected):
                m.plugin_evaluation(name, "Filter", self.profile_name, count)
        return result

    def _extensions(self, state: CycleState) -> list[tuple[str, PreFilterExtensions]]:
        out = []
        for p in self.pre_filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            ext = p.pre_filter_extensions()
            if ext is not None:
                out.append((p.name, ext))
        return out

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        for name, ext in self._extensions(state):
            try:
                st = ext.add_pod(state, pod_to_schedule, pod_to_add, node_info)
            except Exception as exc:
                self._crashed(plugin=name, point="AddPod", pod=pod_to_schedule.key)
                st = error(exc, name)
            if st is not None and not st.is_success():
                return wrap_error(f'running AddPod on PreFilter plugin "{name}"', st, name)
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        for name, ext in self._extensions(state):
            try:
                st = ext.remove_pod(state, pod_to_schedule, pod_to_remove, node_info)
            except Exception as exc:
                self._crashed(plugin=name, point="RemovePod", pod=pod_to_schedule.key)
                st = error(exc, name)
            if st is not None and not st.is_success():
                return wrap_error(f'running RemovePod on PreFilter plugin "{name}"', st, name)
        return None

    # ---- PostFilter ----------------------------------------------------------------
    async def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """The first plugin to return Success (or Error) wins (RunPostFilterPlugins)."""
        start = time.perf_counter()
        reasons: list[str] = []
        result: PostFilterResult | None = None
        final: Status | None = Status(Code.UNSCHEDULABLE, (), "")
        for p in self.post_filter_plugins:
            try:
                r, st = await p.post_filter(state, pod, statuses)
            except REQUEST_ERRORS as exc:
                # Preemption's deletes, DRA's deallocations: routine failures, not bugs.
                final = self._request_failed(exc, plugin=p.name, point="PostFilter", pod=pod.key)
                break
            except Exception as exc:
                self._crashed(plugin=p.name, point="PostFilter", pod=pod.key)
                final = error(exc, p.name)
                break
            if st is None or st.is_success():
                # A successful PostFilter's message ("preemption: found a potential
                # placement ...") still reaches the pod's FailedScheduling event.
                result, final = r, st
                break
            if st.code == Code.ERROR:
                final = st.with_plugin(p.name)
                break
            if st.code != Code.SKIP:
                reasons.extend(st.reasons)
                if r is not None:
                    result = r
        else:
            final = Status(Code.UNSCHEDULABLE, tuple(reasons), "")
        self._point("PostFilter", final, start)
        return result, final
