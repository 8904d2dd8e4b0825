"""Informer events into the cache and the queue (kube-scheduler eventhandlers.go).

- Assigned pods (spec.nodeName set, any scheduler) feed the cache: they use resources.
  Terminal pods leave the cache (their resources are free).
- Unassigned pods whose schedulerName is one of our profiles feed the queue.
- Every change that can make a pending pod schedulable is reported to the queue as a
  ClusterEvent with the old and new objects, for the plugins' queueing hints.
- A deleted pod waiting at Permit is rejected, so its reservation is released at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import structlog

from asched.api import DecodeError, Node, Pod
from asched.backend.cache import Cache
from asched.backend.hints import pod_update_events
from asched.framework import events as ev
from asched.framework.events import ActionType, ClusterEvent, EventResource

log = structlog.get_logger(__name__)


class QueueSink(Protocol):
    def add(self, pod: Pod) -> None: ...

    def update(self, old: Pod, new: Pod) -> None: ...

    def delete(self, pod: Pod) -> None: ...

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object | None,
        new: object | None,
        *,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> int: ...


def _le_priority(pod: Pod) -> Callable[[Pod], bool]:
    """getLEPriorityPreCheck: only pods of equal or lower priority."""
    priority = pod.priority
    return lambda p: p.priority <= priority


def node_update_action(old: Node, new: Node) -> ActionType:
    """Which kinds of node change happened (kube-scheduler nodeSchedulingPropertiesChange)."""
    action = ActionType(0)
    if old.unschedulable and not new.unschedulable:
        # extractNodeSpecUnschedulableChange: only an uncordon counts, as a taint change.
        action |= ActionType.UPDATE_NODE_TAINT
    if old.allocatable != new.allocatable:
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= ActionType.UPDATE_NODE_LABEL
    if old.taints != new.taints:
        action |= ActionType.UPDATE_NODE_TAINT
    if old.ready != new.ready:
        action |= ActionType.UPDATE_NODE_CONDITION
    if old.annotations != new.annotations:
        action |= ActionType.UPDATE_NODE_ANNOTATION
    if old.declared_features != new.declared_features:
        action |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return action


def assigned_pod_update(old: Pod, new: Pod) -> ClusterEvent:
    """What an update of an assigned pod amounts to (kube-scheduler PodSchedulingPropertiesChange).

    The kinds of change (label, scale-down, tolerations, gates) are combined in one
    event; a change of none of them - a status update such as Pending -> Running - is
    UPDATE_OTHER, which wakes only plugins that registered for any pod update, not those
    that registered a specific kind (kube-scheduler's AssignedPodOtherUpdate).
    """
    action = ActionType(0)
    for event in pod_update_events(old, new):
        action |= event.action
    return ClusterEvent(EventResource.POD, action, ev.ASSIGNED_POD_UPDATE.label)


class NodeHandler:
    def __init__(
        self, cache: Cache, queue: QueueSink, on_gone: Callable[[str], None] | None = None
    ) -> None:
        """`on_gone(name)` is told each node deleted (the extenders' copy of its JSON)."""
        self._cache = cache
        self._queue = queue
        self._on_gone = on_gone

    def on_add(self, node: Node) -> None:
        self._cache.add_node(node)
        self._queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, node)

    def on_update(self, old: Node, new: Node) -> None:
        self._cache.update_node(new)
        action = node_update_action(old, new)
        if action:
            self._queue.move_all_to_active_or_backoff(
                ClusterEvent(EventResource.NODE, action, "NodeUpdate"), old, new
            )

    def on_delete(self, node: Node) -> None:
        self._cache.remove_node(node.name)
        if self._on_gone is not None:
            self._on_gone(node.name)
        self._queue.move_all_to_active_or_backoff(ev.NODE_DELETE, node, None)

    def on_decode_error(self, key: str, error: DecodeError) -> None:
        log.error("node_decode_failed", node=key, field=error.field, error=error.message)


class PodHandler:
    def __init__(
        self,
        cache: Cache,
        queue: QueueSink,
        responsible: Callable[[Pod], bool],
        on_gone: Callable[[Pod], None],
        on_invalid: Callable[[str, DecodeError], None],
    ) -> None:
        self._cache = cache
        self._queue = queue
        self._responsible = responsible
        self._on_gone = on_gone
        self._on_invalid = on_invalid

    def _schedulable(self, pod: Pod) -> bool:
        return not pod.node_name and not pod.is_terminal() and self._responsible(pod)

    def on_add(self, pod: Pod) -> None:
        if pod.node_name:
            if pod.is_terminal():
                return
            self._cache.add_pod(pod)
            self._queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_ADD, None, pod)
        elif self._schedulable(pod):
            # Being deleted or not: kube-scheduler's addPodToSchedulingQueue queues it,
            # and skipPodSchedule answers the deleting one with its own event; with
            # GenericWorkload on (asched always serves the native gang API) it then tells
            # the queue, so gang members held at PreEnqueue can count this one.
            self._queue.add(pod)
            self._queue.move_all_to_active_or_backoff(ev.UNSCHEDULED_POD_ADD, None, pod)

    def on_update(self, old: Pod, new: Pod) -> None:
        if new.node_name:
            if not old.node_name:
                # Bound (by us or someone else): it leaves the queue, the cache confirms it.
                self._queue.delete(new)
            if new.is_terminal():
                if not old.is_terminal() and old.node_name:
                    self._cache.remove_pod(old)
                    self._queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, old, None)
                return
            if old.node_name:
                self._cache.update_pod(old, new)
                self._queue.move_all_to_active_or_backoff(assigned_pod_update(old, new), old, new)
            else:
                # Newly bound: kube-scheduler's assigned-pod informer sees it as an add.
                self._cache.add_pod(new)
                self._queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_ADD, None, new)
        elif self._schedulable(new):
            if self._schedulable(old):
                self._queue.update(old, new)
                if (
                    old.nominated_node_name
                    and old.nominated_node_name != new.nominated_node_name
                    and not self._cache.is_assumed(new.uid)
                ):
                    # updatePodInSchedulingQueue: the old nominated node lost a pod that
                    # lower or equal priority pods counted as if it were assigned there.
                    self._queue.move_all_to_active_or_backoff(
                        ev.ASSIGNED_POD_DELETE, old, None, pre_check=_le_priority(old)
                    )
            else:
                self._queue.add(new)
        elif self._schedulable(old):
            self._queue.delete(old)

    def on_delete(self, pod: Pod) -> None:
        was_assigned = bool(pod.node_name) or self._cache.is_assumed(pod.uid)
        if pod.node_name or self._cache.get_pod(pod.uid) is not None:
            self._cache.remove_pod(pod)
        if not pod.node_name:
            self._queue.delete(pod)
        self._on_gone(pod)
        if was_assigned:
            self._queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
        elif pod.nominated_node_name:
            # deletePodFromSchedulingQueue: a nominated pod's deletion frees its node for
            # the lower or equal priority pods that counted it there.
            self._queue.move_all_to_active_or_backoff(
                ev.ASSIGNED_POD_DELETE, pod, None, pre_check=_le_priority(pod)
            )

    def on_decode_error(self, key: str, error: DecodeError) -> None:
        self._on_invalid(key, error)


class ResourceHandler:
    """Changes to a resource a plugin watches (PodGroups, namespaces, ...) as queue events."""

    def __init__(
        self,
        resource: EventResource,
        queue: Callable[[], QueueSink],
        on_invalid: Callable[[str, DecodeError], None] | None = None,
    ) -> None:
        """`on_invalid(key, error)` reports an object that does not decode (an Event)."""
        self._resource = resource
        self._queue = queue
        self._on_invalid = on_invalid
        self._add = ClusterEvent(resource, ActionType.ADD, f"{resource.value}Add")
        self._update = ClusterEvent(resource, ActionType.UPDATE_OTHER, f"{resource.value}Update")
        self._delete = ClusterEvent(resource, ActionType.DELETE, f"{resource.value}Delete")

    def on_add(self, obj: object) -> None:
        self._queue().move_all_to_active_or_backoff(self._add, None, obj)

    def on_update(self, old: object, new: object) -> None:
        self._queue().move_all_to_active_or_backoff(self._update, old, new)

    def on_delete(self, obj: object) -> None:
        self._queue().move_all_to_active_or_backoff(self._delete, obj, None)

    def on_decode_error(self, key: str, error: DecodeError) -> None:
        log.error(
            "object_decode_failed",
            resource=self._resource.value,
            key=key,
            field=error.field,
            error=error.message,
        )
        if self._on_invalid is not None:
            self._on_invalid(key, error)
