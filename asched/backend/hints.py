"""Queueing hints: does a cluster event make a rejected pod worth retrying?

Mirrors kube-scheduler's PriorityQueue.isPodWorthRequeuing (SchedulerQueueingHints GA)
and framework.PodSchedulingPropertiesChange. Only the plugins that rejected a pod are
asked, and only about events they registered; a registration without a hint function,
or a hint function that raises, counts as Queue so a pod is never stranded by a bug.

The per-event lookups are precomputed lazily per (profile, resource, action), so
deciding for one pod costs a dict lookup plus its rejectors' hint calls - not a scan
of every registration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

import structlog

from asched.api import Pod
from asched.backend.inflight import LoggedEvent
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    EventScopeFn,
    QueueingHint,
    QueueingHintFn,
)
from asched.framework.types import QueuedPodInfo

log = structlog.get_logger(__name__)

# profile (scheduler name) -> plugin name -> the events it registered, with hints.
HintMap = Mapping[str, Mapping[str, Sequence[ClusterEventWithHint]]]

# plugin -> its hint functions (None = no hint, i.e. Queue) for one incoming event.
PluginHints = Mapping[str, tuple[QueueingHintFn | None, ...]]

_NO_HINTS: PluginHints = {}


class Strategy(Enum):
    """Where a rejected pod goes after an event (kube-scheduler queueingStrategy)."""

    SKIP = 0  # stay in the unschedulable pool
    AFTER_BACKOFF = 1  # backoffQ, or activeQ if the backoff already expired
    IMMEDIATELY = 2  # activeQ, skipping backoff (a Pending plugin said Queue)


def _pod_event(action: ActionType, name: str) -> ClusterEvent:
    return ClusterEvent(EventResource.UNSCHEDULED_POD, action, f"UnschedulablePod{name}")


POD_LABEL_CHANGED = _pod_event(ActionType.UPDATE_POD_LABEL, "UpdatePodLabel")
POD_SCALED_DOWN = _pod_event(ActionType.UPDATE_POD_SCALE_DOWN, "UpdatePodScaleDown")
POD_GATES_ELIMINATED = _pod_event(
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "UpdatePodSchedulingGatesEliminated"
)
POD_TOLERATION_ADDED = _pod_event(ActionType.UPDATE_POD_TOLERATION, "UpdatePodToleration")
POD_GENERATED_CLAIM = _pod_event(
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM, "UpdatePodGeneratedResourceClaim"
)
POD_OTHER_UPDATE = _pod_event(ActionType.UPDATE_OTHER, "Update")


def _scaled_down(old: Pod, new: Pod) -> bool:
    """Some request went down or disappeared (kube-scheduler extractPodScaleDown)."""
    o, n = old.requests, new.requests
    if (
        n.milli_cpu < o.milli_cpu
        or n.memory < o.memory
        or n.ephemeral_storage < o.ephemeral_storage
    ):
        return True
    return any(n.scalar.get(name, 0) < q for name, q in o.scalar.items())


def pod_update_events(old: Pod | None, new: Pod) -> list[ClusterEvent]:
    """The UnschedulablePod update events an update of a pending pod amounts to.

    kube-scheduler's PodSchedulingPropertiesChange, in its extractor order. When nothing
    specific changed it reports UPDATE_OTHER (kube-scheduler reports the catch-all
    Update, which also wakes plugins that only registered a specific kind of update).
    """
    if old is None:
        return [POD_OTHER_UPDATE]
    events = []
    if old.labels != new.labels:
        events.append(POD_LABEL_CHANGED)
    if _scaled_down(old, new):
        events.append(POD_SCALED_DOWN)
    if old.scheduling_gates and not new.scheduling_gates:
        events.append(POD_GATES_ELIMINATED)
    # The API only lets tolerations be added, so a length change means "added".
    if len(old.tolerations) != len(new.tolerations):
        events.append(POD_TOLERATION_ADDED)
    if old.resource_claim_statuses != new.resource_claim_statuses:
        events.append(POD_GENERATED_CLAIM)
    return events or [POD_OTHER_UPDATE]


def _call_hint(
    fn: QueueingHintFn | None,
    plugin: str,
    pod: Pod,
    event: ClusterEvent,
    *,
    old: object | None,
    new: object | None,
) -> QueueingHint:
    if fn is None:
        return QueueingHint.QUEUE
    try:
        return fn(pod, old, new)
    except Exception:
        # kube-scheduler treats a failing hint as Queue so the pod cannot get stuck.
        log.exception("queueing_hint_failed", plugin=plugin, pod=pod.key, trigger=str(event))
        return QueueingHint.QUEUE


class HintIndex:
    """The registered events of every profile, indexed for fast per-event lookups."""

    def __init__(self, hints: HintMap) -> None:
        self._hints = hints
        self._registered = frozenset(
            (r.event.resource, r.event.action)
            for plugins in hints.values()
            for regs in plugins.values()
            for r in regs
        )
        self._interest: dict[tuple[EventResource, ActionType], bool] = {}
        self._by_event: dict[tuple[str, EventResource, ActionType], PluginHints] = {}
        self._scopes: dict[tuple[str, EventResource, ActionType], Mapping[str, EventScopeFn]] = {}
        self._last: tuple[ClusterEvent, str, PluginHints] | None = None

    def of_interest(self, event: ClusterEvent) -> bool:
        """Could this event move any pod? (kube-scheduler isEventOfInterest)."""
        if event.resource is EventResource.WILDCARD:
            return True
        key = (event.resource, event.action)
        hit = self._interest.get(key)
        if hit is None:
            hit = any(ClusterEvent(res, act).matches(event) for res, act in self._registered)
            self._interest[key] = hit
        return hit

    def for_event(self, profile: str, event: ClusterEvent) -> PluginHints:
        """plugin -> hint functions of its registrations that match `event`."""
        # One event is usually checked against many pods of one profile in a row.
        last = self._last
        if last is not None and last[0] is event and last[1] == profile:
            return last[2]
        key = (profile, event.resource, event.action)
        found = self._by_event.get(key)
        if found is None:
            plugins = self._hints.get(profile, {})
            built: dict[str, tuple[QueueingHintFn | None, ...]] = {}
            for plugin, regs in plugins.items():
                fns = tuple(r.hint for r in regs if r.event.matches(event))
                if fns:
                    built[plugin] = fns
            found = built if built else _NO_HINTS
            self._by_event[key] = found
        self._last = (event, profile, found)
        return found

    def scopes_for(self, profile: str, event: ClusterEvent) -> Mapping[str, EventScopeFn]:
        """plugin -> the scope of its registrations matching `event`, for the plugins all of
        whose matching registrations have one (one without a scope may help any pod)."""
        key = (profile, event.resource, event.action)
        found = self._scopes.get(key)
        if found is None:
            built: dict[str, EventScopeFn] = {}
            for plugin, regs in self._hints.get(profile, {}).items():
                scopes = [r.scope for r in regs if r.event.matches(event)]
                if len(scopes) == 1 and scopes[0] is not None:
                    built[plugin] = scopes[0]
            found = built
            self._scopes[key] = found
        return found

    def plugins_for(self, profiles: Iterable[str], event: ClusterEvent) -> list[tuple[str, str]]:
        """(profile, plugin) pairs whose registrations match `event`."""
        return [(p, plugin) for p in profiles for plugin in self.for_event(p, event)]

    def strategy(
        self, qpi: QueuedPodInfo, event: ClusterEvent, old: object | None, new: object | None
    ) -> Strategy:
        """kube-scheduler isPodWorthRequeuing, for a pod rejected by plugins (not gated).

        This runs for every candidate pod of every event, so the common case - rejected
        by Unschedulable plugins only - takes a short path.
        """
        unschedulable, pending = qpi.unschedulable_plugins, qpi.pending_plugins
        if not unschedulable and not pending:
            return Strategy.AFTER_BACKOFF
        if event.resource is EventResource.WILDCARD:
            # A wildcard event carrying a pod is aimed at that pod only (ForceActivate).
            if new is not None and not (isinstance(new, Pod) and new.uid == qpi.uid):
                return Strategy.SKIP
            return Strategy.AFTER_BACKOFF
        pod = qpi.pod
        by_plugin = self.for_event(pod.scheduler_name, event)
        if by_plugin is _NO_HINTS and pod.scheduler_name not in self._hints:
            log.error("no_queueing_hints_for_profile", profile=pod.scheduler_name, pod=pod.key)
            return Strategy.AFTER_BACKOFF
        if not pending:
            for plugin in unschedulable:
                for fn in by_plugin.get(plugin, ()):
                    if _call_hint(fn, plugin, pod, event, old=old, new=new) is QueueingHint.QUEUE:
                        return Strategy.AFTER_BACKOFF
            return Strategy.SKIP
        result = Strategy.SKIP
        for plugin in unschedulable | pending:
            for fn in by_plugin.get(plugin, ()):
                if _call_hint(fn, plugin, pod, event, old=old, new=new) is QueueingHint.QUEUE_SKIP:
                    continue
                if plugin in pending:
                    return Strategy.IMMEDIATELY
                result = Strategy.AFTER_BACKOFF
        return result

    def strategy_after_flight(self, qpi: QueuedPodInfo, logged: Iterable[LoggedEvent]) -> Strategy:
        """kube-scheduler determineSchedulingHintForInFlightPod: the events that arrived
        while the pod was being scheduled, asked in order; a Pending plugin's Queue wins
        at once, an Unschedulable plugin's Queue too unless Pending plugins may still
        say Queue."""
        result = Strategy.SKIP
        for entry in logged:
            strategy = self.strategy(qpi, entry.event, entry.old, entry.new)
            if strategy is Strategy.IMMEDIATELY:
                return strategy
            if strategy is Strategy.AFTER_BACKOFF:
                if not qpi.pending_plugins:
                    return strategy
                result = strategy
        return result

    def gate_strategy(
        self, qpi: QueuedPodInfo, event: ClusterEvent, old: object | None, new: object | None
    ) -> Strategy:
        """For a pod gated by PreEnqueue: is it worth running PreEnqueue again?

        As moveEntitiesToActiveOrBackoffQueue and isPodWorthRequeuing: only an event its
        gating plugin registered (GatingPluginEvents) is considered, and then the hints
        of every plugin that rejected the pod are asked (the gate joins the plugins of
        its last attempt, as runPreEnqueuePlugin adds it to UnschedulablePlugins): a
        preemptor gated by DefaultPreemption is let out by NodeResourcesFit's answer to
        its victim's deletion, not by DefaultPreemption's hint, which always skips.
        """
        gate = qpi.gating_plugin
        hints = self.for_event(qpi.pod.scheduler_name, event)
        if gate not in hints:
            return Strategy.SKIP
        unschedulable, pending = qpi.unschedulable_plugins, qpi.pending_plugins
        if not unschedulable and not pending:
            # The usual gated pod, never attempted: only its gate is asked. Every event
            # of interest asks this of every gated pod, so no set is made and sorted.
            for fn in hints[gate]:
                if _call_hint(fn, gate, qpi.pod, event, old=old, new=new) is QueueingHint.QUEUE:
                    return Strategy.AFTER_BACKOFF
            return Strategy.SKIP
        for plugin in sorted({gate} | unschedulable | pending):
            for fn in hints.get(plugin, ()):
                if _call_hint(fn, plugin, qpi.pod, event, old=old, new=new) is QueueingHint.QUEUE:
                    return Strategy.AFTER_BACKOFF
        return Strategy.SKIP
