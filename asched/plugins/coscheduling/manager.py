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

from asched.plugins.coscheduling.admission import Admission
from asched.plugins.coscheduling.groups import DEFAULT_WAIT_SECONDS, PODGROUP_INFORMER

# Where plugin.py, the package and the inspector have always imported them from.
__all__ = ["DEFAULT_WAIT_SECONDS", "PODGROUP_INFORMER", "GangManager"]


class GangManager(Admission):
    """The gang state machine, in layers of one job each: groups.py (state and lookups),
    bookkeeping.py (failure, backoff, events, status), reservation.py (PostFilter, Permit,
    Unreserve, the gate), admission.py (QueueSort, PreEnqueue, PreFilter, hints)."""
