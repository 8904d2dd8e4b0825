"""The gang manager's book: PodGroups, the scheduler-side state of each group, and censuses.

The book answers questions (which group is this pod in, how many of its members are
assigned, is it backed off, what status should it have); it makes no decision and sends
nothing. GangManager (manager.py) owns it and is the only one that changes a group's state.
"""

from __future__ import annotations

from typing import Any

import structlog

from asched.api import Pod
from asched.api.podgroup import PodGroup, decode_podgroup, pod_group_key, pod_group_name
from asched.framework.events import EventResource
from asched.framework.handle import Handle
from asched.framework.listers import InformerRequest, ObjectStore
from asched.plugins.coscheduling.state import Census, GroupState
from asched.plugins.coscheduling.status import desired_status

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
_RUNNING, _SUCCEEDED, _FAILED = "Running", "Succeeded", "Failed"


class GroupBook:
    """PodGroups (from the informer), per-group scheduler state, and member censuses."""

    def __init__(self, handle: Handle, *, permit_wait_seconds: float) -> None:
        self._handle = handle
        self._clock = handle.clock
        self._permit_wait = permit_wait_seconds or DEFAULT_WAIT_SECONDS
        self._store: ObjectStore[PodGroup] | None = None
        self._groups: dict[str, GroupState] = {}

    # ---- lookups -----------------------------------------------------------------------
    def pod_groups(self) -> ObjectStore[PodGroup]:
        # Resolved on first use: the scheduler creates the store after asking informers().
        if self._store is None:
            self._store = self._handle.store(PODGROUP_INFORMER)
        return self._store

    def pod_group(self, pod: Pod) -> PodGroup | None:
        name = pod_group_name(pod)
        return self.pod_groups().get(f"{pod.namespace}/{name}") if name else None

    def get(self, key: str) -> PodGroup | None:
        """The PodGroup named `namespace/name`, if the informer has it."""
        return self.pod_groups().get(key)

    def state(self, key: str) -> GroupState:
        """The group's scheduler-side state, created on first use."""
        g = self._groups.get(key)
        if g is None:
            g = self._groups[key] = GroupState()
        return g

    def peek(self, key: str) -> GroupState | None:
        """The group's state if it has any (a lookup that creates nothing)."""
        return self._groups.get(key)

    def forget(self, key: str) -> None:
        """The PodGroup is gone: drop its state."""
        self._groups.pop(key, None)

    def states(self) -> list[tuple[str, GroupState]]:
        return list(self._groups.items())

    def census(self, namespace: str, name: str) -> Census:
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

    def waiting_siblings(self, key: str) -> set[str]:
        return {
            wp.pod.uid
            for wp in self._handle.waiting_pods
            if not wp.decided and pod_group_key(wp.pod) == key
        }

    def assigned(self, c: Census, key: str) -> set[str]:
        """Members that count toward the quorum: assumed or bound, and not on their way out.

        A waiting member that was just rejected (timeout, or a sibling's failure) keeps its
        node in the view until its binding cycle runs Unreserve and forgets it; counting
        it then could complete a quorum with a member that is about to disappear.
        """
        waiting = self._handle.waiting_pods
        out = self.waiting_siblings(key)
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

    def in_backoff(self, key: str) -> bool:
        g = self._groups.get(key)
        return g is not None and g.backoff_until > self._clock.now()

    def status_for(self, key: str) -> tuple[PodGroup, dict[str, Any]] | None:
        """The group and the status fields we own, computed now (the writer's source)."""
        pg = self.pod_groups().get(key)
        if pg is None:
            return None
        return pg, desired_status(pg, self.census(pg.namespace, pg.name).counts())
