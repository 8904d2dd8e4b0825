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

This module builds the profile (plugins per extension point, checked against each point's
Protocol) and says which events and informers its plugins need; the extension points run
in mixins, one module per side of the cycle: runtime_filter.py (PreEnqueue, QueueSort,
PreFilter, Filter, PostFilter), runtime_score.py (PreScore, Score), runtime_bind.py
(Reserve to PostBind), all on runtime_base.py (ProfileSpec, metrics, crash reports).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, TypeVar

from asched.api import Pod
from asched.framework.batch import BatchPlugins
from asched.framework.evaluations import filter_evaluations
from asched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from asched.framework.filtering import Filterer, FilterFn
from asched.framework.handle import NeedsInformers
from asched.framework.handle_impl import PluginHandle
from asched.framework.interfaces import (
    AsyncScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
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
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreNormalizer,
    ScorePlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.memo import KeySigner
from asched.framework.opportunistic import OpportunisticBatch
from asched.framework.podgrouppoints import PodGroupPoints
from asched.framework.points import ExtensionPoint as EP
from asched.framework.prebinding import PodsInPreBind
from asched.framework.registry import Registry
from asched.framework.runtime_base import ProfileSpec
from asched.framework.runtime_bind import BindRunner
from asched.framework.runtime_filter import FilterRunner
from asched.framework.runtime_score import ScoreRunner
from asched.framework.scoring import Scorer
from asched.framework.services import SchedulerServices
from asched.framework.signatures import RefusesOften, SignPlugin, signature
from asched.framework.waiting import WaitingPods

# ProfileSpec moved to runtime_base.py and filter_evaluations is used by runtime_filter.py;
# both stay importable from here, where callers and tests have always found them.
__all__ = ["Framework", "ProfileSpec", "filter_evaluations"]

_ALL_EVENTS = (ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*")),)

P = TypeVar("P")


class Framework(FilterRunner, ScoreRunner, BindRunner):
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
        self.filter_plugins = list(self._at(EP.FILTER, FilterPlugin))
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
            crashed=self._crashed,
            timed=self._point,
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
        self._scores = [
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
        self._signers = _signers(
            [
                *self.pre_filter_plugins,
                *self.filter_plugins,
                *self.pre_score_plugins,
                *self.score_plugins,
            ]
        )
        self.batch: OpportunisticBatch | None = None
        if batching:
            self.batch = OpportunisticBatch(
                self,
                snapshot=lambda: services.snapshot,
                clock=services.clock,
                metrics=lambda: services.metrics,
            )

    def sign_pod(self, pod: Pod) -> bytes | None:
        """frameworkImpl.SignPod: None when the profile or a plugin cannot sign."""
        if self._signers is None:
            return None
        return signature(pod, self._signers)

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
            if isinstance(p, NeedsInformers):
                reqs.extend(p.informers())
        return reqs


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
    # Signers that refuse often go first (RefusesOften): under the default profile
    # PodTopologySpread refuses every pod.
    first = [p for p in out.values() if isinstance(p, RefusesOften) and p.refuses_often()]
    return first + [p for p in out.values() if p not in first]
