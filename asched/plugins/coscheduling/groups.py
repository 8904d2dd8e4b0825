"""The gang manager's state and lookups: PodGroups, per-group state, member censuses.

GangManager (manager.py) is built up in layers, each a module with one job: this one holds
the state and answers questions about it; bookkeeping.py records failures, backoff, events
and status; reservation.py runs PostFilter, Permit, Unreserve and the reservation gate;
admission.py runs QueueSort, PreEnqueue, PreFilter and the queueing hints.
"""

from __future__ import annotations

import abc
import itertools
from typing import Any

import structlog

from asched.api import Pod
from asched.api.podgroup import PodGroup, decode_podgroup, pod_group_key, pod_group_name
from asched.base.errors import UnexpectedErrors
from asched.framework.events import EventResource
from asched.framework.handle import Handle
from asched.framework.listers import InformerRequest, ObjectStore
from asched.plugins.coscheduling.capacity import ClusterTotals
from asched.plugins.coscheduling.state import Census, Gate, GroupState
from asched.plugins.coscheduling.status import PodGroupStatusWriter, desired_status
from asched.plugins.coscheduling.timers import Timers

log = structlog.get_logger(__name__)

PODGROUP_INFORMER: InformerRequest[PodGroup] = InformerRequest(
    resource="podgroups.scheduling.x-k8s.io/v1alpha1",
    list_path="/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
    decode=decode_podgroup,
    event_resource=EventResource.POD_GROUP,
    optional=True,
)

# scheduler-plugins util.DefaultWaitTime: used when neither the group nor the args set one.
DEFAULT_WAIT_SECONDS = 60.0
# How long past its Permit timeout a gate may be held before it is taken back.
_RUNNING, _SUCCEEDED, _FAILED = "Running", "Succeeded", "Failed"


class GroupBook(abc.ABC):
    """The manager's state; `_on_timer` (the timers' callback) is reservation.py's."""

    def __init__(
        self,
        handle: Handle,
        *,
        plugin: str,
        permit_wait_seconds: float,
        backoff_seconds: float,
        reject_fraction: float,
        write_status: bool = True,
    ) -> None:
        self._handle = handle
        self._clock = handle.clock
        self._plugin = plugin
        self._permit_wait = permit_wait_seconds or DEFAULT_WAIT_SECONDS
        self._backoff = backoff_seconds
        self._reject_fraction = reject_fraction
        self.status: PodGroupStatusWriter | None = (
            PodGroupStatusWriter(
                handle.client,
                self._clock,
                self.status_for,
                # An optional ability of the Handle (asched's has it, a test's may not).
                errors=handle if isinstance(handle, UnexpectedErrors) else None,
            )
            if write_status
            else None
        )
        self._store: ObjectStore[PodGroup] | None = None
        self._groups: dict[str, GroupState] = {}
        self._gate: Gate | None = None
        self._tokens = itertools.count(1)
        # Pods turned away by the gate, activated when it frees (uid -> pod).
        self._gate_waiters: dict[str, Pod] = {}
        # Backoff expiry ("backoff") and gate expiry ("gate").
        self.timers = Timers(self._clock, self._on_timer)
        self._totals = ClusterTotals(self._clock)
        # hint_member_changed's last answer: ((group, uid, resourceVersion), enough members).
        self._hint_memo: tuple[tuple[str, str, str], bool] = (("", "", ""), False)
        # Queue timestamps are on the monotonic clock; group times are wall times.
        self._wall_offset = self._clock.wall() - self._clock.now()

    # ---- lookups -----------------------------------------------------------------------
    def _pod_groups(self) -> ObjectStore[PodGroup]:
        # Resolved on first use: the scheduler creates the store after asking informers().
        if self._store is None:
            self._store = self._handle.store(PODGROUP_INFORMER)
        return self._store

    def pod_group(self, pod: Pod) -> PodGroup | None:
        name = pod_group_name(pod)
        return self._pod_groups().get(f"{pod.namespace}/{name}") if name else None

    def _group(self, key: str) -> GroupState:
        g = self._groups.get(key)
        if g is None:
            g = self._groups[key] = GroupState()
        return g

    def _census(self, namespace: str, name: str) -> Census:
        c = Census()
        # Indexed by group: a census costs O(members), not O(pods in the namespace), which
        # matters because it runs several times per member and cycle.
        for p in self._handle.pods_in_group(namespace, name):
            c.total += 1
            if p.node_name:
                c.scheduled += 1
            if p.phase == _RUNNING:
                c.running += 1
            elif p.phase == _SUCCEEDED:
                c.succeeded += 1
            elif p.phase == _FAILED:
                c.failed += 1
            if p.is_terminal() or p.deletion_timestamp is not None:
                continue
            c.live[p.uid] = p
            if p.node_name:
                c.assigned.add(p.uid)
                c.assigned_requests.add(p.requests)
            elif p.scheduling_gates:
                c.gated += 1
        return c

    def _waiting_siblings(self, key: str) -> set[str]:
        return {
            wp.pod.uid
            for wp in self._handle.waiting_pods
            if not wp.decided and pod_group_key(wp.pod) == key
        }

    def _assigned(self, c: Census, key: str) -> set[str]:
        """Members that count toward the quorum: assumed or bound, and not on their way out.

        A waiting member that was just rejected (timeout, or a sibling's failure) keeps its
        node in the view until its binding cycle runs Unreserve and forgets it; counting
        it then could complete a quorum with a member that is about to disappear.
        """
        waiting = self._handle.waiting_pods
        out = self._waiting_siblings(key)
        for uid in c.assigned:
            wp = waiting.get(uid)
            # Decided with plugins still pending means rejected (allow clears them all).
            if wp is not None and wp.decided and wp.pending_plugins:
                continue
            out.add(uid)
        return out

    def timeout_for(self, pg: PodGroup) -> float:
        """spec.scheduleTimeoutSeconds, else permitWaitingTimeSeconds (util.GetWaitTimeDuration)."""
        return float(pg.schedule_timeout_seconds or self._permit_wait)

    @property
    def gate_holder(self) -> str:
        return self._gate.group if self._gate is not None else ""

    def in_backoff(self, key: str) -> bool:
        g = self._groups.get(key)
        return g is not None and g.backoff_until > self._clock.now()

    def status_for(self, key: str) -> tuple[PodGroup, dict[str, Any]] | None:
        """The group and the status fields we own, computed now (the writer's source)."""
        pg = self._pod_groups().get(key)
        if pg is None:
            return None
        return pg, desired_status(pg, self._census(pg.namespace, pg.name).counts())

    @abc.abstractmethod
    def _on_timer(self, kind: str, key: str, token: int) -> None:
        """A backoff ("backoff") or gate ("gate") timer fired."""
