"""The runtime of one profile: builds its plugins and runs them at each extension point.

Mirrors kube-scheduler's framework/runtime frameworkImpl, including:
- a plugin's exception becomes an Error status tagged with the plugin's name;
- PreFilter/PreScore `Skip` removes that plugin's Filter/Score for the pod;
- Filter stops at the first non-success plugin for a node (RunFilterPlugins);
- Score: per-plugin raw scores -> NormalizeScore -> times the weight -> summed;
- Unreserve runs in reverse order, always on every Reserve plugin;
- Permit: any rejection wins; Wait parks the pod in `waiting_pods` with the shortest
  timeout per plugin (capped at 15 minutes, kube-scheduler's maxTimeout);
- the first Bind plugin that does not Skip binds.
The Framework is also the plugins' Handle (handle_impl.ServicesHandle, which it extends).
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

import structlog

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from asched.framework.handle_impl import ServicesHandle
from asched.framework.interfaces import (
    BindPlugin,
    EnqueueExtensions,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreNormalizer,
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import Registry
from asched.framework.services import SchedulerServices
from asched.framework.status import Code, Status, error
from asched.framework.types import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from asched.framework.waiting import WaitingPod

log = structlog.get_logger(__name__)

MAX_PERMIT_TIMEOUT = 15 * 60.0
# kube-scheduler samples plugin execution metrics for 10% of cycles.
PLUGIN_METRICS_SAMPLE = 0.10
_ALL_EVENTS = (ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*")),)

FilterFn = Callable[[CycleState, Pod, NodeInfo], "Status | Awaitable[Status | None] | None"]
ScoreFn = Callable[[CycleState, Pod, NodeInfo], "int | Awaitable[int]"]


class ProfileSpec:
    """The resolved plugin lists of one profile (what asched.config produces)."""

    def __init__(
        self,
        scheduler_name: str,
        plugins: Mapping[str, Sequence[tuple[str, int]]],
        plugin_args: Mapping[str, Any],
        percentage_of_nodes_to_score: int | None = None,
    ) -> None:
        self.scheduler_name = scheduler_name
        self.plugins = plugins
        self.plugin_args = plugin_args
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score


def _status_name(st: Status | None) -> str:
    return "Success" if st is None else st.code_name()


class Framework(ServicesHandle):
    def __init__(
        self, profile: ProfileSpec, registry: Registry, services: SchedulerServices
    ) -> None:
        super().__init__(profile.scheduler_name, services)
        self.profile = profile
        self.plugins: dict[str, Plugin] = {}
        names: list[str] = []
        for refs in profile.plugins.values():
            names.extend(n for n, _ in refs if n not in names)
        for name in names:
            spec = registry.get(name)
            self.plugins[name] = spec.new(profile.plugin_args.get(name), self)

        def at(point: str) -> list[Any]:
            return [self.plugins[n] for n, _ in profile.plugins.get(point, ())]

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = at("preEnqueue")
        qs = at("queueSort")
        if len(qs) != 1:
            raise ValueError(f"profile {profile.scheduler_name}: exactly one queueSort plugin")
        self.queue_sort: QueueSortPlugin = qs[0]
        self.pre_filter_plugins: list[PreFilterPlugin] = at("preFilter")
        self.filter_plugins: list[Plugin] = at("filter")
        self.post_filter_plugins: list[PostFilterPlugin] = at("postFilter")
        self.pre_score_plugins: list[PreScorePlugin] = at("preScore")
        self.score_plugins: list[Plugin] = at("score")
        self.score_weights: dict[str, int] = {
            n: (w or 1) for n, w in profile.plugins.get("score", ())
        }
        self.reserve_plugins: list[ReservePlugin] = at("reserve")
        self.permit_plugins: list[PermitPlugin] = at("permit")
        self.pre_bind_plugins: list[PreBindPlugin] = at("preBind")
        self.bind_plugins: list[BindPlugin] = at("bind")
        self.post_bind_plugins: list[PostBindPlugin] = at("postBind")
        # Detected once: which Filter/Score plugins are coroutines.
        self._filters: list[tuple[str, FilterFn, bool]] = [
            (p.name, p.filter, inspect.iscoroutinefunction(p.filter))  # type: ignore[attr-defined]
            for p in self.filter_plugins
        ]
        self._scores: list[tuple[str, ScoreFn, bool]] = [
            (p.name, p.score, inspect.iscoroutinefunction(p.score))  # type: ignore[attr-defined]
            for p in self.score_plugins
        ]
        self._sample_metrics = False

    # ---- registration ------------------------------------------------------------
    def enqueue_hints(self) -> dict[str, Sequence[ClusterEventWithHint]]:
        """Per plugin that can reject pods, the events that may make them schedulable.

        Plugins that do not implement EnqueueExtensions are interested in every event
        (kube-scheduler registers them for all events).
        """
        out: dict[str, Sequence[ClusterEventWithHint]] = {}
        rejecting = (
            self.pre_enqueue_plugins
            + self.pre_filter_plugins
            + self.filter_plugins
            + self.reserve_plugins
            + self.permit_plugins
        )
        for p in rejecting:
            if isinstance(p, EnqueueExtensions):
                out[p.name] = list(p.events_to_register())
            else:
                out[p.name] = _ALL_EVENTS
        return out

    def informer_requests(self) -> list[InformerRequest[Any]]:
        reqs: list[InformerRequest[Any]] = []
        for p in self.plugins.values():
            fn = getattr(p, "informers", None)
            if callable(fn):
                reqs.extend(fn())
        return reqs

    # ---- metrics -----------------------------------------------------------------
    def begin_cycle(self) -> None:
        self._sample_metrics = random.random() < PLUGIN_METRICS_SAMPLE

    def record_point(self, point: str, status: Status | None, start: float) -> None:
        """Time an extension point the scheduler runs itself (Score fans out there)."""
        self._point(point, status, start)

    def _point(self, point: str, status: Status | None, start: float) -> None:
        m = self._services.metrics
        if m is not None:
            m.extension_point(
                point, _status_name(status), self.profile_name, time.perf_counter() - start
            )

    def _plugin(self, plugin: str, point: str, status: Status | None, start: float) -> None:
        m = self._services.metrics
        if m is not None and self._sample_metrics:
            m.plugin_execution(plugin, point, _status_name(status), time.perf_counter() - start)

    # ---- PreEnqueue / QueueSort ----------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> tuple[str, Status] | None:
        for p in self.pre_enqueue_plugins:
            try:
                st = p.pre_enqueue(pod)
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="PreEnqueue", pod=pod.key)
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
        """Returns (merged result, first failure, plugins that rejected or narrowed nodes)."""
        start = time.perf_counter()
        result: PreFilterResult | None = None
        rejectors: set[str] = set()
        status: Status | None = None
        for p in self.pre_filter_plugins:
            t = time.perf_counter()
            try:
                out: Any = p.pre_filter(state, pod, nodes)
                if inspect.isawaitable(out):  # an async PreFilter (allowed, see interfaces)
                    out = await out
                r, st = out
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="PreFilter", pod=pod.key)
                status = error(exc, p.name)
                break
            self._plugin(p.name, "PreFilter", st, t)
            if st is not None and st.code == Code.SKIP:
                state.skip_filter_plugins.add(p.name)
                continue
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                if st.is_rejected():
                    rejectors.add(p.name)
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
        return any(is_async for _, _, is_async in self._filters)

    def filter_fns(self, state: CycleState) -> list[tuple[str, FilterFn, bool]]:
        """The Filter plugins to run for this pod (minus those PreFilter skipped)."""
        skip = state.skip_filter_plugins
        return [f for f in self._filters if f[0] not in skip]

    async def run_filter_plugins(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        fns: Sequence[tuple[str, FilterFn, bool]] | None = None,
    ) -> Status | None:
        for name, fn, is_async in fns if fns is not None else self.filter_fns(state):
            try:
                res = fn(state, pod, node_info)
                st = (
                    await cast(Awaitable[Status | None], res)
                    if is_async
                    else cast("Status | None", res)
                )
            except Exception as exc:
                log.exception(
                    "plugin_error", plugin=name, point="Filter", pod=pod.key, node=node_info.name
                )
                return error(exc, name)
            if st is not None and st.code != Code.SUCCESS:
                return st.with_plugin(name)
        return None

    def run_filter_plugins_sync(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        fns: Sequence[tuple[str, FilterFn, bool]],
    ) -> Status | None:
        """Fast path when every Filter plugin is a plain function."""
        for name, fn, _ in fns:
            try:
                st = fn(state, pod, node_info)
            except Exception as exc:
                log.exception(
                    "plugin_error", plugin=name, point="Filter", pod=pod.key, node=node_info.name
                )
                return error(exc, name)
            if st is not None and cast(Status, st).code != Code.SUCCESS:
                return cast(Status, st).with_plugin(name)
        return None

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filter with the node's nominated pods of equal or higher priority counted.

        kube-scheduler runs Filter twice when such pods exist: once with them added
        (they may take the resources first) and once without (pod affinity that only
        the nominated pods satisfy must not count).
        """
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
                st = self.run_pre_filter_extension_add_pod(state2, pod, p, ni2)
                if st is not None and not st.is_success():
                    return st
            st = await self.run_filter_plugins(state2, pod, ni2)
            if st is not None and not st.is_success():
                return st
        return await self.run_filter_plugins(state, pod, node_info)

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
                return error(exc, name)
            if st is not None and not st.is_success():
                return st.with_plugin(name)
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        for name, ext in self._extensions(state):
            try:
                st = ext.remove_pod(state, pod_to_schedule, pod_to_remove, node_info)
            except Exception as exc:
                return error(exc, name)
            if st is not None and not st.is_success():
                return st.with_plugin(name)
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
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="PostFilter", pod=pod.key)
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

    # ---- PreScore / Score -----------------------------------------------------------
    async def run_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.pre_score_plugins:
            try:
                st: Any = p.pre_score(state, pod, nodes)
                if inspect.isawaitable(st):  # an async PreScore (allowed, see interfaces)
                    st = await st
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="PreScore", pod=pod.key)
                status = error(exc, p.name)
                break
            if st is not None and st.code == Code.SKIP:
                state.skip_score_plugins.add(p.name)
                continue
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                break
        self._point("PreScore", status, start)
        return status

    def score_fns(self, state: CycleState) -> list[tuple[str, ScoreFn, bool]]:
        skip = state.skip_score_plugins
        return [s for s in self._scores if s[0] not in skip]

    def normalize_and_weigh(
        self, state: CycleState, pod: Pod, per_plugin: dict[str, list[NodeScore]]
    ) -> Status | None:
        """NormalizeScore each plugin's list in place, then multiply by its weight."""
        for name, scores in per_plugin.items():
            plugin = self.plugins[name]
            if isinstance(plugin, ScoreNormalizer):
                try:
                    st = plugin.normalize_score(state, pod, scores)
                except Exception as exc:
                    return error(exc, name)
                if st is not None and not st.is_success():
                    return st.with_plugin(name)
            weight = self.score_weights.get(name, 1)
            for ns in scores:
                if not MIN_NODE_SCORE <= ns.score <= MAX_NODE_SCORE:
                    return error(
                        f"plugin {name} returns an invalid score {ns.score} for node {ns.name}, "
                        f"it should be in the range [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                        "after normalizing",
                        name,
                    )
                ns.score *= weight
        return None

    # ---- Reserve / Permit -----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.reserve_plugins:
            try:
                st = p.reserve(state, pod, node_name)
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="Reserve", pod=pod.key)
                status = error(exc, p.name)
                break
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                break
        self._point("Reserve", status, start)
        return status

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in reversed(self.reserve_plugins):
            try:
                p.unreserve(state, pod, node_name)
            except Exception:
                log.exception("plugin_error", plugin=p.name, point="Unreserve", pod=pod.key)
        self._point("Unreserve", None, start)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Success, a rejection, or Wait (the pod is then parked in waiting_pods)."""
        start = time.perf_counter()
        timeouts: dict[str, float] = {}
        status: Status | None = None
        for p in self.permit_plugins:
            try:
                st, timeout = p.permit(state, pod, node_name)
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="Permit", pod=pod.key)
                status = error(exc, p.name)
                break
            if st is None or st.is_success():
                continue
            if st.code == Code.WAIT:
                timeouts[p.name] = min(max(timeout, 0.0), MAX_PERMIT_TIMEOUT)
                continue
            status = st.with_plugin(p.name)
            if st.is_rejected():
                status = Status(Code.UNSCHEDULABLE, st.reasons, p.name)
            break
        if status is None and timeouts:
            self._waiting.add(WaitingPod(pod, node_name, timeouts, self.clock.now()))
            status = Status(Code.WAIT, ("one or more plugins prevented scheduling the pod",), "")
        self._point("Permit", status, start)
        return status

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        wp = self._waiting.get(pod.uid)
        if wp is None:
            return None
        try:
            st = await wp.wait(self.clock)
        finally:
            self._waiting.remove(pod.uid)
        return None if st.is_success() else st

    # ---- binding cycle ---------------------------------------------------------------
    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.pre_bind_plugins:
            try:
                st = await p.pre_bind(state, pod, node_name)
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="PreBind", pod=pod.key)
                status = error(exc, p.name)
                break
            if st is not None and st.code not in (Code.SUCCESS, Code.SKIP):
                status = st.with_plugin(p.name)
                break
        self._point("PreBind", status, start)
        return status

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = Status(Code.SKIP)
        for p in self.bind_plugins:
            try:
                st = await p.bind(state, pod, node_name)
            except Exception as exc:
                log.exception("plugin_error", plugin=p.name, point="Bind", pod=pod.key)
                status = error(exc, p.name)
                break
            if st is not None and st.code == Code.SKIP:
                continue
            status = None if st is None or st.is_success() else st.with_plugin(p.name)
            break
        self._point("Bind", status, start)
        return status

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in self.post_bind_plugins:
            try:
                await p.post_bind(state, pod, node_name)
            except Exception:
                log.exception("plugin_error", plugin=p.name, point="PostBind", pod=pod.key)
        self._point("PostBind", None, start)
