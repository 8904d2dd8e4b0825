"""The gang state machine behind the Coscheduling plugin (scheduler-plugins core.Manager).

A PodGroup's members are placed all-or-nothing: each member is assumed and reserved as
usual, then parked at Permit until assumed + bound members reach minMember; the member that
completes the quorum allows all the waiting ones. Any failure on the way - a member that
fits no node (PostFilter), a Permit timeout, a rejection or a bind failure (Unreserve) -
rejects every waiting sibling at once, so a partial gang never keeps resources, and may put
the group into backoff (podGroupBackoffSeconds). A bind failure after the quorum cannot
unbind siblings already bound (no scheduler can); the group is not backed off, so the
failed member is retried at once and completes the gang as soon as a node takes it.

Deadlock freedom - the reservation gate. Per-pod scheduling with Permit is deadlock-prone:
when gangs A and B together need more than the cluster holds, and their members are
interleaved in the queue, A and B each reserve part of what they need and both wait until
their timeouts, forever repeating (scheduler-plugins #114, #117). Here one group at a time
may hold a partial reservation:
- a group takes the gate when one of its members parks at Permit without a quorum, and
  keeps it until the quorum is reached (all allowed) or the group is rejected; the gate is
  also released when it outlives the group's Permit timeout (plus a grace), which the
  timeout's Unreserve normally does first;
- while group G holds it, PreFilter turns away members of every other group that would
  have to wait at Permit, with Pending "waiting for PodGroup G to finish its reservation"
  (Pending, not Unschedulable: a gate wait must not make DefaultPreemption evict anyone,
  and it requeues without backoff); those pods are activated again when the gate frees;
- pods outside any group, and members whose own Permit would complete their group's
  quorum, never wait at Permit, so they pass freely.
Invariant: members waiting at Permit without a quorum all belong to the gate's holder (the
scheduling cycle runs one pod at a time, and only Permit takes the gate, after PreFilter
checked it). So no two gangs can each hold a part of the cluster; the holder either
completes or releases everything within its timeout, and the gate passes on. QueueSort
orders members by their group's creation time, then group name, so siblings are adjacent
in the queue and the gate is held for about as long as it takes to place one gang; when
a member parks first, its siblings are activated so they follow at once. A group that
failed sorts by its failure time instead (as scheduler-plugins does), so a hopeless group
at the head of the queue cannot hold everyone else back.

Failing fast instead of waiting forever:
- PreFilter rejects (UnschedulableAndUnresolvable) a group whose minResources, or the
  smallest total its minMember members could request, exceeds the cluster's allocatable
  ("can never fit"), and one whose minResources exceed the cluster's free resources;
- when a member fits no node, PostFilter rejects the waiting siblings at once unless the
  group can still complete and the gap to minMember is within podGroupRejectPercentage;
  siblings not yet tried are then held (Pending) until that member is retried, instead of
  taking the gate for a gang that cannot complete.
A Warning event on the PodGroup says why, and the status writer (status.py) records the
phase; the manager only marks a group changed, and its status is computed when written.

The manager is driven synchronously from the scheduling and binding cycles (never awaits);
`run()` fires timers (backoff expiry, gate expiry) that activate pods and runs the status
writer.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import anyio
import structlog

from asched.api import Pod
from asched.api.podgroup import PodGroup, decode_podgroup, pod_group_key, pod_group_name
from asched.base.errors import UnexpectedErrors
from asched.framework.cycle_state import CycleState
from asched.framework.events import EventResource, QueueingHint
from asched.framework.handle import Handle
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status, pending, skip, unresolvable, unschedulable, wait
from asched.framework.types import NodeToStatus, QueuedPodInfo
from asched.plugins.coscheduling.capacity import ClusterTotals, never_fits, short_now
from asched.plugins.coscheduling.state import (
    CYCLE_KEY,
    Census,
    CycleNote,
    Gate,
    GroupState,
    summarize_statuses,
)
from asched.plugins.coscheduling.status import (
    PodGroupStatusWriter,
    desired_status,
    rfc3339,
)
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
GATE_GRACE_SECONDS = 5.0
# The same Warning about a group is not repeated more often than this.
EVENT_REPEAT_SECONDS = 60.0
# Once minMember pods of a group were seen, PreEnqueue trusts that for this long (PreFilter
# counts again anyway); saves a namespace scan per member when a gang arrives at once.
MEMBERS_SEEN_TTL_SECONDS = 5.0
_RUNNING, _SUCCEEDED, _FAILED = "Running", "Succeeded", "Failed"


class GangManager:
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

    # ---- QueueSort -----------------------------------------------------------------------
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Priority, then the group's creation (or last failure) time, then group and pod name."""
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        ta, ka = self._sort_key(a)
        tb, kb = self._sort_key(b)
        if ta != tb:
            return ta < tb
        return ka < kb

    def _sort_key(self, qpi: QueuedPodInfo) -> tuple[float, tuple[str, str]]:
        pod = qpi.pod
        name = pod_group_name(pod)
        if name:
            key = f"{pod.namespace}/{name}"
            g = self._groups.get(key)
            if g is not None and g.failed_at is not None:
                return g.failed_at, (key, pod.name)
            pg = self._pod_groups().get(key)
            if pg is not None:
                return pg.creation_timestamp, (key, pod.name)
        queued = qpi.initial_attempt_timestamp
        ts = (queued if queued is not None else qpi.timestamp) + self._wall_offset
        return ts, (pod.key, "")

    # ---- PreEnqueue ----------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Hold a member until its PodGroup and minMember pods of it exist."""
        name = pod_group_name(pod)
        if not name:
            return None
        key = f"{pod.namespace}/{name}"
        pg = self._pod_groups().get(key)
        if pg is None:
            return unresolvable(f"waiting for PodGroup {key} to be created", plugin=self._plugin)
        g = self._group(key)
        now = self._clock.now()
        if g.members_seen_until > now:
            return None
        c = self._census(pod.namespace, name)
        live = len(c.live) + (0 if pod.uid in c.live else 1)
        if live >= pg.min_member:
            g.members_seen_until = now + MEMBERS_SEEN_TTL_SECONDS
        else:
            self._mark(pg)
            return unresolvable(
                f"waiting for PodGroup {key}: {live} of its minMember {pg.min_member} pods exist",
                plugin=self._plugin,
            )
        return None

    # ---- PreFilter -----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        name = pod_group_name(pod)
        if not name:
            return None
        key = f"{pod.namespace}/{name}"
        st = self._pre_filter(key, name, pod, nodes)
        state.write(CYCLE_KEY, CycleNote(key, st is not None))
        return st

    def _pre_filter(
        self, key: str, name: str, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        pg = self._pod_groups().get(key)
        if pg is None:
            self._groups.pop(key, None)
            return unresolvable(f"PodGroup {key} not found", plugin=self._plugin)
        now = self._clock.now()
        g = self._group(key)
        if g.backoff_until > now:
            return unresolvable(
                f"PodGroup {key} failed recently ({g.failure}); retrying in "
                f"{g.backoff_until - now:.0f}s",
                plugin=self._plugin,
            )
        c = self._census(pod.namespace, name)
        live = len(c.live) + (0 if pod.uid in c.live else 1)
        if live < pg.min_member:
            # scheduler-plugins' wording, so users searching for it find it.
            return unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                f"number: {live}, minMember of group: {pg.min_member}",
                plugin=self._plugin,
            )
        if live - c.gated < pg.min_member:
            return unresolvable(
                f"pre-filter pod {pod.name} cannot proceed due to {c.gated} scheduling-gated "
                f"pods in PodGroup {key}",
                plugin=self._plugin,
            )
        if g.blocked_by:
            blocker = c.live.get(g.blocked_by)
            if g.blocked_by == pod.uid or blocker is None or blocker.node_name:
                g.blocked_by = g.blocked_name = ""
            else:
                return pending(
                    f"PodGroup {key} waits for its member {g.blocked_name}, which fits no node",
                    plugin=self._plugin,
                )
        # A pod whose own Permit completes the quorum never waits, so it needs no gate.
        completes = len(self._assigned(c, key) | {pod.uid}) >= pg.min_member
        if not completes:
            self._expire_gate(now)
            gate = self._gate
            if gate is not None and gate.group != key:
                self._gate_waiters[pod.uid] = pod
                return pending(
                    f"waiting for PodGroup {gate.group} to finish its reservation",
                    plugin=self._plugin,
                )
        if g.capacity_ok_until <= now:
            reason = self._capacity_problem(pg, c, nodes)
            if reason is not None:
                self._warn(pg, reason)
                return unresolvable(reason, plugin=self._plugin)
            g.capacity_ok_until = now + self.timeout_for(pg)
        self._mark(pg, starting=True)
        return None

    def _capacity_problem(self, pg: PodGroup, c: Census, nodes: Sequence[NodeInfo]) -> str | None:
        total = self._totals.allocatable(nodes)
        return never_fits(pg, list(c.live.values()), total) or short_now(
            pg, nodes, len(c.assigned), c.assigned_requests
        )

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

    # ---- queueing hints --------------------------------------------------------------------
    def hint_member_changed(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """A pod of the same group appeared (or lost its gates): minMember may now exist.

        Only worth a retry once the group has minMember pods: every member rejection a
        new sibling can cure needs that. Members are held in the pool while their gang is
        created, so each new sibling is hinted for each of them; the answer is computed
        once per (group, sibling version) and reused, keeping a gang's creation O(size^2)
        cheap lookups instead of O(size^2) member counts.
        """
        obj = new if new is not None else old
        key = pod_group_key(pod)
        if not key or not isinstance(obj, Pod) or pod_group_key(obj) != key:
            return QueueingHint.QUEUE_SKIP
        memo = (key, obj.uid, obj.resource_version)
        if self._hint_memo[0] != memo:
            pg = self._pod_groups().get(key)
            enough = pg is not None and (
                len(self._handle.pods_in_group(pod.namespace, pg.name)) >= pg.min_member
            )
            self._hint_memo = (memo, enough)
        return QueueingHint.QUEUE if self._hint_memo[1] else QueueingHint.QUEUE_SKIP

    def hint_pod_group_changed(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        obj = new if new is not None else old
        if (
            isinstance(obj, PodGroup)
            and obj.namespace == pod.namespace
            and obj.name == pod_group_name(pod)
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # ---- transitions -------------------------------------------------------------------
    def _reject_waiting(self, key: str, message: str) -> int:
        n = 0
        for wp in self._handle.waiting_pods:
            if not wp.decided and pod_group_key(wp.pod) == key:
                wp.reject(self._plugin, message)
                n += 1
        return n

    def _fail_group(self, pg: PodGroup, message: str, reason: str) -> None:
        """`message` goes into the Warning event; `reason`, shorter, to members in backoff."""
        g = self._group(pg.key)
        g.failure = reason
        g.failed_at = self._clock.wall()
        g.capacity_ok_until = 0.0
        g.quorum = False
        if self._backoff > 0:
            g.backoff_until = self._clock.now() + self._backoff
            self.timers.add(g.backoff_until, "backoff", pg.key)
        log.info("podgroup_rejected", podgroup=pg.key, reason=message, backoff=self._backoff)
        self._warn(pg, message)
        self._mark(pg)

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

    def _warn(self, pg: PodGroup, message: str) -> None:
        g = self._group(pg.key)
        now = self._clock.now()
        last, at = g.last_event
        if last == message and now - at < EVENT_REPEAT_SECONDS:
            return
        g.last_event = (message, now)
        self._handle.events.event(pg.ref(), "Warning", "Unschedulable", "Scheduling", message)

    def _mark(self, pg: PodGroup, *, starting: bool = False) -> None:
        if self.status is None:
            return
        g = self._group(pg.key)
        extra = None
        if starting and not g.started:
            g.started = True
            if not pg.status.schedule_start_time:
                extra = {"scheduleStartTime": rfc3339(self._clock.wall())}
        self.status.mark(pg.key, extra)

    def status_for(self, key: str) -> tuple[PodGroup, dict[str, Any]] | None:
        """The group and the status fields we own, computed now (the writer's source)."""
        pg = self._pod_groups().get(key)
        if pg is None:
            return None
        return pg, desired_status(pg, self._census(pg.namespace, pg.name).counts())

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
        namespace, _, name = key.partition("/")
        pods = [p for p in self._census(namespace, name).live.values() if not p.node_name]
        if pods:
            self._handle.activate(pods)

    async def run(self) -> None:
        """Timers and status writes (owned by the scheduler's task group via the plugin)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.timers.run)
            if self.status is not None:
                tg.start_soon(self.status.run)

    def describe(self) -> dict[str, Any]:
        """A snapshot of the state machine for debugging and tests."""
        return {
            "gate": self.gate_holder,
            "gate_waiters": sorted(p.key for p in self._gate_waiters.values()),
            "backoff": sorted(k for k in self._groups if self.in_backoff(k)),
            "blocked": {k: g.blocked_name for k, g in self._groups.items() if g.blocked_by},
        }
