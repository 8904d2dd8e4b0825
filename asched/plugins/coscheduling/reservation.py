"""The gang manager's reservation: PostFilter, Permit, Unreserve and the reservation gate.

Permit parks members until the group's quorum (scheduler-plugins Coscheduling.Permit);
the first group to park a member without a quorum takes the gate, which it keeps until
the quorum allows everyone or the group is rejected (the deadlock-freedom argument is in
manager.py). PostFilter and Unreserve reject a partial gang as a whole.
"""

from __future__ import annotations

import structlog

from asched.api import Pod
from asched.api.podgroup import pod_group_key, pod_group_name
from asched.framework.cycle_state import CycleState
from asched.framework.status import Status, skip, unschedulable, wait
from asched.framework.types import NodeToStatus
from asched.plugins.coscheduling.bookkeeping import Bookkeeping
from asched.plugins.coscheduling.state import CYCLE_KEY, Gate, summarize_statuses

log = structlog.get_logger(__name__)

# How long past its Permit timeout a gate may be held before it is taken back.
GATE_GRACE_SECONDS = 5.0


class Reservation(Bookkeeping):
    """Places a gang all-or-nothing, one partial reservation at a time."""

    # ---- PostFilter ------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus) -> Status:
        """A member fits nowhere: reject the whole group unless it can still complete."""
        name = pod_group_name(pod)
        if not name:
            return skip(self._plugin)
        note = state.get(CYCLE_KEY)
        if note is not None and note.rejected_in_pre_filter:
            # Our own PreFilter verdict (backoff, quorum, gate): nothing new to act on.
            return skip(self._plugin)
        key = f"{pod.namespace}/{name}"
        pg = self._pod_groups().get(key)
        if pg is None:
            return unschedulable(f"PodGroup {key} not found", plugin=self._plugin)
        c = self._census(pod.namespace, name)
        assigned = self._assigned(c, key) - {pod.uid}
        if len(assigned) >= pg.min_member:
            return unschedulable(plugin=self._plugin)
        others = sum(1 for uid, p in c.live.items() if uid != pod.uid and not p.node_name)
        can_complete = len(assigned) + others >= pg.min_member
        gap = (pg.min_member - len(assigned)) / pg.min_member
        if can_complete and gap <= self._reject_fraction:
            # scheduler-plugins: a small gap may still close with the members not yet tried.
            return unschedulable(plugin=self._plugin)
        why = f"pod {pod.name} fits no node: {summarize_statuses(statuses) or 'no node fits it'}"
        rejected = self._reject_waiting(
            key,
            f"optimistic rejection in PostFilter: PodGroup {key} cannot be placed now "
            f"because pod {pod.name} fits no node",
        )
        g = self._group(key)
        g.blocked_by, g.blocked_name = pod.uid, pod.name
        self._release_gate(key)
        self._fail_group(
            pg,
            f"PodGroup {key} rejected ({len(assigned)}/{pg.min_member} members reserved, "
            f"{rejected} released): {why}",
            why,
        )
        return unschedulable(
            f"PodGroup {key} gets rejected due to Pod {pod.name} is unschedulable even after "
            "PostFilter",
            plugin=self._plugin,
        )

    # ---- Permit ----------------------------------------------------------------------------
    def permit(self, pod: Pod) -> tuple[Status | None, float]:
        name = pod_group_name(pod)
        if not name:
            return None, 0.0
        key = f"{pod.namespace}/{name}"
        pg = self._pod_groups().get(key)
        if pg is None:
            return unschedulable("PodGroup not found", plugin=self._plugin), 0.0
        c = self._census(pod.namespace, name)
        waiting = self._waiting_siblings(key)
        assigned = self._assigned(c, key) | {pod.uid}
        g = self._group(key)
        if len(assigned) >= pg.min_member:
            for wp in self._handle.waiting_pods:
                if wp.pod.uid in waiting:
                    wp.allow(self._plugin)
            g.quorum = True
            g.failed_at = None
            g.blocked_by = g.blocked_name = ""
            self._release_gate(key)
            log.debug(
                "podgroup_quorum", podgroup=key, assigned=len(assigned), min_member=pg.min_member
            )
            self._mark(pg)
            return None, 0.0
        timeout = self.timeout_for(pg)
        now = self._clock.now()
        if self._gate is None:
            token = next(self._tokens)
            self._gate = Gate(key, token, now + timeout + GATE_GRACE_SECONDS)
            self.timers.add(self._gate.expires, "gate", key, token)
            g.quorum = False
            log.debug("podgroup_gate_acquired", podgroup=key, pod=pod.key)
            # The rest of the gang follows at once (scheduler-plugins ActivateSiblings).
            siblings = [p for uid, p in c.live.items() if uid != pod.uid and not p.node_name]
            if siblings:
                self._handle.activate(siblings)
        elif self._gate.group != key:
            # PreFilter let it through, so this is a bug; waiting is still safe (bounded).
            log.warning("podgroup_gate_invariant", podgroup=key, holder=self._gate.group)
        return wait(
            f"waiting for PodGroup {key} to reach minMember {pg.min_member}", plugin=self._plugin
        ), timeout

    # ---- Unreserve / PostBind ------------------------------------------------------------
    def unreserve(self, pod: Pod) -> None:
        """Release the whole partial gang; idempotent (every released sibling calls it too)."""
        name = pod_group_name(pod)
        if not name:
            return
        key = f"{pod.namespace}/{name}"
        rejected = self._reject_waiting(
            key,
            f"rejection in Unreserve: PodGroup {key} released its reservation because "
            f"pod {pod.name} was unreserved",
        )
        held = self._gate is not None and self._gate.group == key
        self._release_gate(key)
        g = self._groups.get(key)
        if g is None or g.quorum or not (held or rejected):
            # A bind failure after the quorum, or a sibling's echo of a failure already handled.
            return
        pg = self._pod_groups().get(key)
        if pg is None:
            return
        why = f"Permit timeout or rejection of pod {pod.name}"
        self._fail_group(
            pg,
            f"PodGroup {key} did not reach minMember {pg.min_member} ({why}); "
            f"{rejected + 1} reserved members released",
            why,
        )

    def post_bind(self, pod: Pod) -> None:
        pg = self.pod_group(pod)
        if pg is not None:
            self._mark(pg)

    # ---- transitions -------------------------------------------------------------------
    def _reject_waiting(self, key: str, message: str) -> int:
        n = 0
        for wp in self._handle.waiting_pods:
            if not wp.decided and pod_group_key(wp.pod) == key:
                wp.reject(self._plugin, message)
                n += 1
        return n

    def _release_gate(self, key: str) -> None:
        if self._gate is None or self._gate.group != key:
            return
        self._gate = None
        log.debug("podgroup_gate_released", podgroup=key, waiters=len(self._gate_waiters))
        if self._gate_waiters:
            pods = list(self._gate_waiters.values())
            self._gate_waiters.clear()
            self._handle.activate(pods)

    def _expire_gate(self, now: float) -> None:
        gate = self._gate
        if gate is None:
            return
        if gate.expires <= now or self._pod_groups().get(gate.group) is None:
            self._take_back_gate(gate)

    def _take_back_gate(self, gate: Gate) -> None:
        """The holder outlived its timeout, or its PodGroup is gone: release it anyway."""
        log.warning("podgroup_gate_expired", podgroup=gate.group)
        rejected = self._reject_waiting(
            gate.group,
            f"PodGroup {gate.group} did not complete its reservation in time",
        )
        self._release_gate(gate.group)
        pg = self._pod_groups().get(gate.group)
        if pg is not None and rejected:
            g = self._group(gate.group)
            if not g.quorum:
                self._fail_group(
                    pg,
                    f"PodGroup {pg.key} did not complete its reservation in time",
                    "its reservation did not complete in time",
                )

    # ---- timers ------------------------------------------------------------------------
    def _on_timer(self, kind: str, key: str, token: int) -> None:
        """Activate a group whose backoff ended; take back a gate held past its expiry."""
        if kind == "gate":
            gate = self._gate
            if gate is not None and gate.token == token:
                self._take_back_gate(gate)
            return
        g = self._groups.get(key)
        if g is None or g.backoff_until > self._clock.now():
            return
        self._backoff_ended(key)
