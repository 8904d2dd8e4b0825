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

`Framework` reads in the order of a pod's life: building the profile (the plugins of
each extension point, checked once against the point's Protocol, and every optional
ability found once with isinstance), what the profile registers (events, informers, pod
signing), then the points of the scheduling cycle (PreEnqueue, QueueSort, PreFilter,
Filter, PostFilter, PreScore, Score, Reserve, Permit) and of the binding cycle
(WaitOnPermit, PreBindPreFlight, PreBind, Bind, PostBind). The work that is not running
a point belongs to collaborators it owns: the per-node and columnar Filter pass
(filtering.Filterer), scoring and normalizing (scoring.Scorer), opportunistic batching
(opportunistic.OpportunisticBatch), metrics and crash reports (reports.PluginReports).

A PreBind or Bind plugin that lets a request failure (asched.client.protocol's
RequestError) escape gets an Error status, as for any other error, but without the crash
report (PluginReports.request_failed): such failures are routine (a restarted API
server, a 409), not bugs.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

import orjson

from asched.api import Pod
from asched.base.clock import Clock
from asched.client.protocol import REQUEST_ERRORS
from asched.framework.batch import BatchPlugins
from asched.framework.cycle_state import CycleState
from asched.framework.evaluations import filter_evaluations
from asched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from asched.framework.filtering import FilterCheck, Filterer, FilterFn
from asched.framework.handle_impl import PluginHandle
from asched.framework.interfaces import (
    AsyncFilterPlugin,
    AsyncScorePlugin,
    BackgroundTask,
    BindPlugin,
    CompositePlacementFeasiblePlugin,
    EnqueueExtensions,
    FilterPlugin,
    NeedsInformers,
    NodeStaticPlugin,
    PermitPlugin,
    PlacementFeasiblePlugin,
    PlacementGeneratePlugin,
    PlacementScorePlugin,
    Plugin,
    PodGroupPostFilterPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreBindPreFlightPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    RefusingSignPlugin,
    ReservePlugin,
    ScoreNormalizer,
    ScorePlugin,
    SignPlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.memo import KeySigner
from asched.framework.nodeinfo import NodeInfo
from asched.framework.opportunistic import OpportunisticBatch
from asched.framework.podgrouppoints import PodGroupPoints
from asched.framework.points import ExtensionPoint as EP
from asched.framework.prebinding import PodsInPreBind
from asched.framework.registry import Registry
from asched.framework.reports import PluginReports
from asched.framework.scoring import ScoreFn, Scorer
from asched.framework.services import SchedulerServices
from asched.framework.signatures import SCHEDULER_NAME, SignValue
from asched.framework.status import Code, Status, error, no_node_left, wrap_error
from asched.framework.types import (
    FilterPass,
    Int64Array,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    ScoreTable,
)
from asched.framework.waiting import WaitingPod, WaitingPods

__all__ = ["Framework", "ProfileSpec"]

_ALL_EVENTS = (ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*")),)

# kube-scheduler's maxTimeout for a Permit plugin's Wait.
MAX_PERMIT_TIMEOUT = 15 * 60.0

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


class Framework:
    """The runtime of one profile (kube-scheduler frameworkImpl)."""

    def __init__(
        self,
        profile: ProfileSpec,
        registry: Registry,
        services: SchedulerServices,
        *,
        columnar: bool = True,
        batching: bool = True,
    ) -> None:
        """`columnar=False` turns the batch Filter/Score path off (asched.framework.batch),
        so every plugin runs node by node: the reference the fast path must equal.
        `batching=False` turns opportunistic batching off (kube-scheduler's
        OpportunisticBatching gate; asched.framework.opportunistic)."""
        self.profile = profile
        self.columnar = columnar
        self._services = services
        self._reports = PluginReports(profile.scheduler_name, services)
        self.waiting_pods = WaitingPods()
        self.pods_in_pre_bind = PodsInPreBind()
        self.handle = PluginHandle(
            profile.scheduler_name, services, self.waiting_pods, self, self.pods_in_pre_bind
        )
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
        # The pod group cycle's points run in a collaborator of their own.
        self.pod_group_points = PodGroupPoints(
            self._at(EP.PLACEMENT_GENERATE, PlacementGeneratePlugin),
            self._at(EP.PLACEMENT_SCORE, PlacementScorePlugin),
            dict(profile.plugins.get(EP.PLACEMENT_SCORE, ())),
            self._at(EP.POD_GROUP_POST_FILTER, PodGroupPostFilterPlugin),
            crashed=self._reports.crashed,
            timed=self._reports.point,
        )
        self.pre_bind_plugins = self._at(EP.PRE_BIND, PreBindPlugin)
        # Checked once here: isinstance against a runtime Protocol walks its members, and
        # the binding cycle asks for every pod.
        self.pre_bind_pre_flights: list[PreBindPreFlightPlugin | None] = [
            p if isinstance(p, PreBindPreFlightPlugin) else None for p in self.pre_bind_plugins
        ]
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
            crashed=self._reports.crashed,
        )
        self._filterer = Filterer(
            filters,
            batch=self._batch,
            services=services,
            columnar=lambda: self.columnar,
            crashed=self._reports.crashed,
            add_pod=self.run_pre_filter_extension_add_pod,
        )
        self._signers = _signers(
            [
                *self.pre_filter_plugins,
                *self.filter_plugins,
                *self.pre_score_plugins,
                *self.score_plugins,
            ]
        )
        # Started by the scheduler when it leads (BackgroundTask.run).
        self.background_tasks = [p for p in self.plugins.values() if isinstance(p, BackgroundTask)]
        self.batch: OpportunisticBatch | None = None
        if batching:
            self.batch = OpportunisticBatch(
                self,
                snapshot=lambda: services.snapshot,
                clock=services.clock,
                metrics=lambda: services.metrics,
            )

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

    def begin_cycle(self) -> None:
        """A scheduling cycle starts: draw whether it samples per-plugin metrics."""
        self._reports.begin_cycle()

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._services.nominated_pods_for_node(node_name)

    # ---- what the profile registers ------------------------------------------------
    def sign_pod(self, pod: Pod) -> bytes | None:
        """frameworkImpl.SignPod: None when the profile or a plugin cannot sign."""
        if self._signers is None:
            return None
        return signature(pod, self._signers)

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
            if isinstance(p, NeedsInformers):
                reqs.extend(p.informers())
        return reqs

    # ---- PreEnqueue / QueueSort ----------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> tuple[str, Status] | None:
        for p in self.pre_enqueue_plugins:
            try:
                st = p.pre_enqueue(pod)
            except Exception as exc:
                self._reports.crashed(plugin=p.name, point="PreEnqueue", pod=pod.key)
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
                self._reports.crashed(plugin=p.name, point="PreFilter", pod=pod.key)
                status = wrap_error(f'running PreFilter plugin "{p.name}"', error(exc, p.name))
                break
            self._reports.plugin(p.name, "PreFilter", st, t)
            if st is None or st.code != Code.SKIP:
                self._reports.evaluated(p.name, "PreFilter", 1)
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
                    status = no_node_left(rejectors, p.name)
                    break
        self._reports.point("PreFilter", status, start)
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
        """RunPreFilterExtensionAddPod: every extension sees `pod_to_add` join the node."""
        return self._run_extension(
            "AddPod",
            state,
            pod_to_schedule,
            lambda ext: ext.add_pod(state, pod_to_schedule, pod_to_add, node_info),
        )

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """RunPreFilterExtensionRemovePod: every extension sees `pod_to_remove` leave."""
        return self._run_extension(
            "RemovePod",
            state,
            pod_to_schedule,
            lambda ext: ext.remove_pod(state, pod_to_schedule, pod_to_remove, node_info),
        )

    def _run_extension(
        self,
        point: str,
        state: CycleState,
        pod_to_schedule: Pod,
        call: Callable[[PreFilterExtensions], Status | None],
    ) -> Status | None:
        for name, ext in self._extensions(state):
            try:
                st = call(ext)
            except Exception as exc:
                self._reports.crashed(plugin=name, point=point, pod=pod_to_schedule.key)
                st = error(exc, name)
            if st is not None and not st.is_success():
                return wrap_error(f'running {point} on PreFilter plugin "{name}"', st, name)
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
                final = self._reports.request_failed(
                    exc, plugin=p.name, point="PostFilter", pod=pod.key
                )
                break
            except Exception as exc:
                self._reports.crashed(plugin=p.name, point="PostFilter", pod=pod.key)
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
        self._reports.point("PostFilter", final, start)
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
                self._reports.crashed(plugin=p.name, point="PreScore", pod=pod.key)
                status = wrap_error(f'running PreScore plugin "{p.name}"', error(exc, p.name))
                break
            if st is not None and st.code == Code.SKIP:
                state.skip_score_plugins.add(p.name)
                continue
            self._reports.evaluated(p.name, "PreScore", 1)
            if st is not None and not st.is_success():
                status = wrap_error(f'running PreScore plugin "{p.name}"', st, p.name)
                break
        self._reports.point("PreScore", status, start)
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
            self._reports.evaluated(name, "Score", len(nodes))
        table, status = await self._scorer.run(fns, state, pod, nodes, columnar=self.columnar)
        if fns:
            self._reports.point("Score", status, start)
        return table, status

    async def run_raw_score_plugins(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[list[tuple[str, int]], Status | None]:
        """RunRawScorePlugins: each Score plugin left for the pod on one node, unnormalized
        (opportunistic batching rescores the node it chose last)."""
        out: list[tuple[str, int]] = []
        for name, fn, is_async in self.score_fns(state):
            try:
                f: Any = fn  # int, or an awaitable of one when is_async
                value = await f(state, pod, node_info) if is_async else f(state, pod, node_info)
            except Exception as exc:
                self._reports.crashed(plugin=name, point="Score", pod=pod.key)
                return out, wrap_error(f'plugin "{name}" failed with', error(exc, name), name)
            out.append((name, int(value)))
        return out, None

    def normalize_scores(
        self,
        state: CycleState,
        pod: Pod,
        raws: Sequence[tuple[str, Int64Array]],
        names: Callable[[], list[str]],
    ) -> tuple[ScoreTable, Status | None]:
        """NormalizeScores over raw scores kept from earlier (Scorer.totals_from_raw)."""
        return self._scorer.totals_from_raw(raws, state, pod, names, columnar=self.columnar)

    # ---- Reserve / Permit -----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.reserve_plugins:
            try:
                st = p.reserve(state, pod, node_name)
            except Exception as exc:
                self._reports.crashed(plugin=p.name, point="Reserve", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                if not st.is_rejected():
                    status = wrap_error(f'running Reserve plugin "{p.name}"', status)
                break
        self._reports.point("Reserve", status, start)
        return status

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in reversed(self.reserve_plugins):
            try:
                p.unreserve(state, pod, node_name)
            except Exception:
                self._reports.crashed(plugin=p.name, point="Unreserve", pod=pod.key)
        self._reports.point("Unreserve", None, start)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Success, a rejection, or Wait (the pod is then parked in waiting_pods)."""
        start = time.perf_counter()
        timeouts: dict[str, float] = {}
        status: Status | None = None
        for p in self.permit_plugins:
            try:
                st, timeout = p.permit(state, pod, node_name)
            except Exception as exc:
                self._reports.crashed(plugin=p.name, point="Permit", pod=pod.key)
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
        self._reports.point("Permit", status, start)
        return status

    def run_placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int, *, composite: bool = False
    ) -> Status | None:
        """RunPlacementFeasiblePlugins: the first Unschedulable ends it; a Wait is kept and
        the next plugin asked; an error or other code becomes an Error status. With
        `composite`, `group` names a CompositePodGroup and the counts are its children;
        plugins that cannot judge a composite are skipped."""
        status: Status | None = None
        for p in self.placement_feasible_plugins:
            try:
                if not composite:
                    st = p.placement_feasible(namespace, group, scheduled, remaining)
                elif isinstance(p, CompositePlacementFeasiblePlugin):
                    st = p.composite_placement_feasible(namespace, group, scheduled, remaining)
                else:
                    continue
            except Exception as exc:
                self._reports.crashed(
                    plugin=p.name, point="PlacementFeasible", pod=f"{namespace}/{group}"
                )
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
    def run_pre_bind_pre_flights(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """RunPreBindPreFlights: None (Success) when some PreBind plugin will act for this
        pod, Skip when none will, an Error status when one failed or answered anything but
        Success, Skip or Error. Plugins that said Skip are left out of PreBind
        (SetSkipPreBindPlugins). A plugin without the method counts as Success (see
        PreBindPreFlightPlugin). kube-scheduler also records which plugins may run in
        parallel and runs PreBind in groups; asched runs them one after another, which only
        changes how long a pod with several PreBind plugins takes."""
        start = time.perf_counter()
        status: Status | None = Status(Code.SKIP)
        skipped: set[str] = set()
        for p in self.pre_bind_pre_flights:
            if p is None:
                status = None
                continue
            t = time.perf_counter()
            try:
                st = p.pre_bind_pre_flight(state, pod, node_name)
            except Exception as exc:
                self._reports.crashed(plugin=p.name, point="PreBindPreFlight", pod=pod.key)
                st = error(exc, p.name)
            self._reports.plugin(p.name, "PreBindPreFlight", st, t)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.ERROR:
                assert st is not None
                status = wrap_error(f'running PreBindPreFlight "{p.name}"', st, p.name)
                break
            if code == Code.SUCCESS:
                status = None
            elif code == Code.SKIP:
                skipped.add(p.name)
            else:
                assert st is not None
                status = error(
                    f'PreBindPreFlight {p.name} returned "{st.code_name()}", which is '
                    "unsupported. It is supposed to return Success, Skip, or Error status",
                    p.name,
                )
                break
        else:
            state.skip_pre_bind_plugins = skipped
        self._reports.point("PreBindPreFlight", status, start)
        return status

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.pre_bind_plugins:
            if p.name in state.skip_pre_bind_plugins:
                continue
            st = await self._call_binder(
                "PreBind", p.name, pod, node_name, partial(p.pre_bind, state, pod, node_name)
            )
            if st is not None and st.code not in (Code.SUCCESS, Code.SKIP):
                status = st.with_plugin(p.name)
                if not st.is_rejected():
                    status = wrap_error(f'running PreBind plugin "{p.name}"', status)
                break
        self._reports.point("PreBind", status, start)
        return status

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = Status(Code.SKIP)
        for p in self.bind_plugins:
            st = await self._call_binder(
                "Bind", p.name, pod, node_name, partial(p.bind, state, pod, node_name)
            )
            if st is not None and st.code == Code.SKIP:
                continue
            status = None if st is None or st.is_success() else st.with_plugin(p.name)
            if status is not None and not status.is_rejected():
                status = wrap_error(f'running Bind plugin "{p.name}"', status)
            break
        self._reports.point("Bind", status, start)
        return status

    async def _call_binder(
        self,
        point: str,
        name: str,
        pod: Pod,
        node_name: str,
        call: Callable[[], Awaitable[Status | None]],
    ) -> Status | None:
        """One PreBind or Bind call. These plugins write to the API server, so a failed
        request is a routine fault that becomes a status through the classification
        (PluginReports.request_failed); anything else raised is a plugin bug."""
        try:
            return await call()
        except REQUEST_ERRORS as exc:
            return self._reports.request_failed(
                exc, plugin=name, point=point, pod=pod.key, node=node_name
            )
        except Exception as exc:
            self._reports.crashed(plugin=name, point=point, pod=pod.key)
            return error(exc, name)

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in self.post_bind_plugins:
            try:
                await p.post_bind(state, pod, node_name)
            except Exception:
                self._reports.crashed(plugin=p.name, point="PostBind", pod=pod.key)
        self._reports.point("PostBind", None, start)


def _signers(plugins: Sequence[object]) -> list[SignPlugin] | None:
    """computeBatchablePlugins: every PreFilter, Filter, PreScore and Score plugin, once
    each, if all of them can sign pods; else None (the profile never signs)."""
    out: dict[str, SignPlugin] = {}
    for p in plugins:
        if isinstance(p, SignPlugin):
            out.setdefault(p.name, p)
        elif isinstance(p, NodeStaticPlugin) and isinstance(p, Plugin):
            # Its pod key says everything its answers depend on (asched.framework.memo).
            out.setdefault(p.name, KeySigner(p.name, p))
        else:
            return None
    # Those that say they often refuse go first (RefusingSignPlugin).
    first = [p for p in out.values() if _refuses_often(p)]
    return first + [p for p in out.values() if not _refuses_often(p)]


def _refuses_often(p: SignPlugin) -> bool:
    return isinstance(p, RefusingSignPlugin) and p.refuses_signing_often


def signature(pod: Pod, plugins: Sequence[SignPlugin]) -> bytes | None:
    """frameworkImpl.SignPod: the fragments of every plugin under their keys, with the
    scheduler name; None when a plugin refuses (the pod is never batched)."""
    sig: dict[str, SignValue] = {SCHEDULER_NAME: pod.scheduler_name}
    for p in plugins:
        result = p.sign_pod(pod)
        if isinstance(result, Status):
            return None
        for f in result:
            sig[f.key] = f.value
    # Go marshals a map, whose keys encoding/json sorts.
    return orjson.dumps(sig, option=orjson.OPT_SORT_KEYS)
