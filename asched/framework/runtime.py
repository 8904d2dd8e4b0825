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
It runs every extension point, Filter over a run of nodes and Score included, so the
algorithm, `asched explain` and the tests call it and keep no plugin loops of their own.
Plugins never see the Framework: they get a narrow PluginHandle (handle_impl.py).
"""

from __future__ import annotations

import inspect
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import structlog

from asched.api import Pod
from asched.base.clock import Clock
from asched.base.errors import report_unexpected
from asched.framework.batch import BatchPlugins
from asched.framework.cycle_state import CycleState
from asched.framework.evaluations import filter_evaluations
from asched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from asched.framework.filtering import FilterCheck, Filterer, FilterFn
from asched.framework.handle_impl import PluginHandle
from asched.framework.interfaces import (
    AsyncFilterPlugin,
    AsyncScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    PlacementFeasiblePlugin,
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
    ScorePlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.points import ExtensionPoint as EP
from asched.framework.registry import Registry
from asched.framework.scoring import ScoreFn, Scorer
from asched.framework.services import SchedulerServices
from asched.framework.status import Code, Status, error, wrap_error
from asched.framework.types import (
    FilterPass,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    ScoreTable,
)
from asched.framework.waiting import WaitingPod, WaitingPods

log = structlog.get_logger(__name__)

MAX_PERMIT_TIMEOUT = 15 * 60.0
# kube-scheduler samples plugin execution metrics for 10% of cycles.
PLUGIN_METRICS_SAMPLE = 0.10
_ALL_EVENTS = (ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*")),)

P = TypeVar("P")


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


class Framework:
    """The runtime of one profile (kube-scheduler frameworkImpl)."""

    def __init__(
        self,
        profile: ProfileSpec,
        registry: Registry,
        services: SchedulerServices,
        *,
        columnar: bool = True,
    ) -> None:
        """`columnar=False` turns the batch Filter/Score path off (asched.framework.batch),
        so every plugin runs node by node: the reference the fast path must equal."""
        self.profile = profile
        self.columnar = columnar
        self._services = services
        self.waiting_pods = WaitingPods()
        self.handle = PluginHandle(profile.scheduler_name, services, self.waiting_pods, self)
        self.plugins: dict[str, Plugin] = {}
        names: list[str] = []
        for refs in profile.plugins.values():
            names.extend(n for n, _ in refs if n not in names)
        for name in names:
            spec = registry.get(name)
            self.plugins[name] = spec.new(profile.plugin_args.get(name), self.handle)

        self.pre_enqueue_plugins = self._at(EP.PRE_ENQUEUE, PreEnqueuePlugin)
        qs = self._at(EP.QUEUE_SORT, QueueSortPlugin)
        if len(qs) != 1:
            raise ValueError(f"profile {profile.scheduler_name}: exactly one queueSort plugin")
        self.queue_sort = qs[0]
        self.pre_filter_plugins = self._at(EP.PRE_FILTER, PreFilterPlugin)
        self.filter_plugins: list[FilterPlugin | AsyncFilterPlugin] = list(
            self._at(EP.FILTER, FilterPlugin)
        )
        self.post_filter_plugins = self._at(EP.POST_FILTER, PostFilterPlugin)
        self.pre_score_plugins = self._at(EP.PRE_SCORE, PreScorePlugin)
        self.score_plugins: list[ScorePlugin | AsyncScorePlugin] = list(
            self._at(EP.SCORE, ScorePlugin)
        )
        self.score_weights: dict[str, int] = {
            n: (w or 1) for n, w in profile.plugins.get(EP.SCORE, ())
        }
        self.reserve_plugins = self._at(EP.RESERVE, ReservePlugin)
        self.permit_plugins = self._at(EP.PERMIT, PermitPlugin)
        # Not a config point (Go finds GangScheduling by its interface, framework.go).
        self.placement_feasible_plugins = [
            p for p in self.plugins.values() if isinstance(p, PlacementFeasiblePlugin)
        ]
        self.pre_bind_plugins = self._at(EP.PRE_BIND, PreBindPlugin)
        self.bind_plugins = self._at(EP.BIND, BindPlugin)
        self.post_bind_plugins = self._at(EP.POST_BIND, PostBindPlugin)
        # Detected once: which Filter/Score plugins are coroutines.
        filters: list[tuple[str, FilterFn, bool]] = [
            (p.name, p.filter, inspect.iscoroutinefunction(p.filter)) for p in self.filter_plugins
        ]
        self._scores: list[tuple[str, ScoreFn, bool]] = [
            (p.name, p.score, inspect.iscoroutinefunction(p.score)) for p in self.score_plugins
        ]
        self._normalizers: dict[str, ScoreNormalizer] = {
            p.name: p for p in self.score_plugins if isinstance(p, ScoreNormalizer)
        }
        self._batch = BatchPlugins(
            {p.name: p for p in self.filter_plugins}, {p.name: p for p in self.score_plugins}
        )
        self._scorer = Scorer(
            weights=self.score_weights,
            normalizers=self._normalizers,
            batch=self._batch,
            crashed=self._crashed,
        )
        self._filterer = Filterer(
            filters,
            batch=self._batch,
            services=services,
            columnar=lambda: self.columnar,
            crashed=self._crashed,
            add_pod=self.run_pre_filter_extension_add_pod,
        )
        self._sample_metrics = False

    def _at(self, point: EP, protocol: type[P]) -> list[P]:
        """The plugins enabled at `point`, checked once against the point's Protocol."""
        out: list[P] = []
        for name, _ in self.profile.plugins.get(point, ()):
            plugin = self.plugins[name]
            if not isinstance(plugin, protocol):
                raise ValueError(
                    f"profile {self.profile_name}: plugin {name} is enabled at {point} "
                    f"but does not implement {point.method}()"
                )
            out.append(plugin)
        return out

    @property
    def profile_name(self) -> str:
        return self.profile.scheduler_name

    @property
    def clock(self) -> Clock:
        return self._services.clock

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._services.nominated_pods_for_node(node_name)

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

    def _crashed(self, **where: Any) -> None:
        """Inside `except`: a plugin raised, a bug in it. Logged with the stack and counted
        (asched_unexpected_errors_total{component="plugin"}); the caller turns it into an
        Error status, or carries on where there is no status (Unreserve, PostBind)."""
        report_unexpected(log, self._services.metrics, "plugin", "plugin_error", **where)

    def _evaluated(self, plugin: str, point: str, count: int) -> None:
        m = self._services.metrics
        if m is not None:
            m.plugin_evaluation(plugin, point, self.profile_name, count)

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

    # ---- Reserve / Permit -----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.reserve_plugins:
            try:
                st = p.reserve(state, pod, node_name)
            except Exception as exc:
                self._crashed(plugin=p.name, point="Reserve", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                if not st.is_rejected():
                    status = wrap_error(f'running Reserve plugin "{p.name}"', status)
                break
        self._point("Reserve", status, start)
        return status

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in reversed(self.reserve_plugins):
            try:
                p.unreserve(state, pod, node_name)
            except Exception:
                self._crashed(plugin=p.name, point="Unreserve", pod=pod.key)
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
                self._crashed(plugin=p.name, point="Permit", pod=pod.key)
                status = wrap_error(f'running Permit plugin "{p.name}"', error(exc, p.name))
                break
            if st is None or st.is_success():
                continue
            if st.code == Code.WAIT:
                timeouts[p.name] = min(max(timeout, 0.0), MAX_PERMIT_TIMEOUT)
                continue
            status = st.with_plugin(p.name)
            if st.is_rejected():
                status = Status(Code.UNSCHEDULABLE, st.reasons, p.name)
            else:
                status = wrap_error(f'running Permit plugin "{p.name}"', status)
            break
        if status is None and timeouts:
            self.waiting_pods.add(WaitingPod(pod, node_name, timeouts, self.clock.now()))
            status = Status(Code.WAIT, ("one or more plugins prevented scheduling the pod",), "")
        self._point("Permit", status, start)
        return status

    def run_placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None:
        """RunPlacementFeasiblePlugins: the first Unschedulable ends it; a Wait is kept and
        the next plugin asked; an error or other code becomes an Error status."""
        status: Status | None = None
        for p in self.placement_feasible_plugins:
            try:
                st = p.placement_feasible(namespace, group, scheduled, remaining)
            except Exception as exc:
                self._crashed(plugin=p.name, point="PlacementFeasible", pod=f"{namespace}/{group}")
                st = error(exc, p.name)
            if st is None or st.is_success():
                continue
            if st.code == Code.WAIT:
                status = st.with_plugin(p.name)
                continue
            if st.code == Code.UNSCHEDULABLE:
                return st.with_plugin(p.name)
            if st.code == Code.ERROR:
                return wrap_error("running PlacementFeasible plugin", st, p.name)
            return error(
                f"unexpected status from PlacementFeasible plugin: {st.code_name()}", p.name
            )
        return status

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        started = self.clock.now()
        try:
            st = await wp.wait(self.clock)
        finally:
            self.waiting_pods.remove(pod.uid)
        m = self._services.metrics
        if m is not None:
            m.permit_wait(st.code_name(), self.clock.now() - started)
        return None if st.is_success() else st

    # ---- binding cycle ---------------------------------------------------------------
    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.pre_bind_plugins:
            try:
                st = await p.pre_bind(state, pod, node_name)
            except Exception as exc:
                self._crashed(plugin=p.name, point="PreBind", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and st.code not in (Code.SUCCESS, Code.SKIP):
                status = st.with_plugin(p.name)
                if not st.is_rejected():
                    status = wrap_error(f'running PreBind plugin "{p.name}"', status)
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
                self._crashed(plugin=p.name, point="Bind", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and st.code == Code.SKIP:
                continue
            status = None if st is None or st.is_success() else st.with_plugin(p.name)
            if status is not None and not status.is_rejected():
                status = wrap_error(f'running Bind plugin "{p.name}"', status)
            break
        self._point("Bind", status, start)
        return status

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in self.post_bind_plugins:
            try:
                await p.post_bind(state, pod, node_name)
            except Exception:
                self._crashed(plugin=p.name, point="PostBind", pod=pod.key)
        self._point("PostBind", None, start)
