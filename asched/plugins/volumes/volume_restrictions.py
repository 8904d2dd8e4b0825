"""VolumeRestrictions: a ReadWriteOncePod claim serves one pod in the whole cluster.

Follows kube-scheduler's volumerestrictions plugin (volume_restrictions.go) for
ReadWriteOncePod: PreFilter counts the scheduled pods that already use one of the pod's
ReadWriteOncePod claims (IsPVCUsedByPods over the snapshot); Filter rejects every node
while that count is above zero, as Unschedulable, so preemption may free the claim. The
AddPod/RemovePod extensions move the count when preemption's dry run removes a victim
that holds the claim (preFilterState.updateWithPod).

The legacy in-line disk conflicts follow isVolumeConflict: a GCE PD or an iSCSI target
mounted by a pod on the node unless both mounts are read-only, any shared AWS EBS
volume, an RBD image of the same pool with an overlapping monitor unless both are
read-only; such a node is rejected with ErrReasonDiskConflict before the
ReadWriteOncePod check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asched.api import Pod
from asched.api.pod import Volume
from asched.api.storage import READ_WRITE_ONCE_POD
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import VOLUMES, SignFragment, SignResult, volumes
from asched.framework.status import Code, Status, error, skip
from asched.framework.types import PreFilterResult
from asched.plugins.volumes.informers import PERSISTENT_VOLUME_CLAIMS

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)


@dataclass(slots=True)
class _State:
    rwop_claims: frozenset[str]
    conflicts: int

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicts)

    def uses(self, pod: Pod) -> int:
        """conflictingPVCRefCountForPod (by claim name, as Go counts it)."""
        return sum(
            1
            for v in pod.volumes
            if v.source == "persistentVolumeClaim" and v.claim_name in self.rwop_claims
        )


_STATE: StateKey[_State] = StateKey("PreFilter" + NAME)


def _disks_conflict(a: Volume, b: Volume) -> bool:
    """isVolumeConflict for one pair of volumes."""
    da, db = a.disk, b.disk
    if da is None or db is None or a.source != b.source or da.ident != db.ident:
        return False
    if a.source == "awsElasticBlockStore":
        return True
    if a.source == "rbd" and (da.pool != db.pool or not da.monitors & db.monitors):
        return False
    return not (da.read_only and db.read_only)


def disk_conflict(pod: Pod, node_info: NodeInfo) -> bool:
    """Does one of the pod's in-line disks conflict with a pod on the node?"""
    mine = [v for v in pod.volumes if v.disk is not None]
    if not mine:
        return False
    return any(
        _disks_conflict(v, theirs)
        for other in node_info.pods
        for theirs in other.volumes
        if theirs.disk is not None
        for v in mine
    )


def _claim_keys(pod: Pod) -> set[str]:
    return {
        f"{pod.namespace}/{v.claim_name}"
        for v in pod.volumes
        if v.source == "persistentVolumeClaim"
    }


def _pod_deleted_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterAssignedPodDeleted: the deleted pod shared one of our claims or
    held a disk that conflicts with ours."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    # Go looks no further at a pod of another namespace, in-line disks included.
    if old.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if _claim_keys(old) & _claim_keys(pod):
        return QueueingHint.QUEUE
    for v in pod.volumes:
        if any(_disks_conflict(v, theirs) for theirs in old.volumes):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _pvc_added_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeClaimAdded: one of the pod's own claims."""
    ns, name = getattr(new, "namespace", None), getattr(new, "name", None)
    return QueueingHint.QUEUE if f"{ns}/{name}" in _claim_keys(pod) else QueueingHint.QUEUE_SKIP


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, PreFilterExtensions, EnqueueExtensions):
    NAME = NAME

    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """VolumeRestrictions.SignPod."""
        return (SignFragment(VOLUMES, volumes(pod)),)

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (PERSISTENT_VOLUME_CLAIMS,)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        needs_disk_check = any(v.disk is not None for v in pod.volumes)
        names = [v.claim_name for v in pod.volumes if v.source == "persistentVolumeClaim"]
        if not names:
            if not needs_disk_check:
                return None, skip(NAME)
            state.write(_STATE, _State(frozenset(), 0))
            return None, None
        pvcs = self._handle.store(PERSISTENT_VOLUME_CLAIMS)
        rwop: set[str] = set()
        for claim_name in names:
            pvc = pvcs.get(f"{pod.namespace}/{claim_name}")
            if pvc is None:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f'persistentvolumeclaim "{claim_name}" not found',),
                    NAME,
                )
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(claim_name)
        if not rwop and not needs_disk_check:
            return None, skip(NAME)
        wanted = {f"{pod.namespace}/{n}" for n in rwop}
        # StorageInfos().IsPVCUsedByPods: any scheduled pod that mounts the claim.
        used: set[str] = set()
        for ni in self._handle.snapshot.node_infos():
            for other in ni.pods:
                used |= _claim_keys(other) & wanted
        conflicts = len(used)
        if conflicts == 0 and not needs_disk_check:
            return None, skip(NAME)
        state.write(_STATE, _State(frozenset(rwop), conflicts))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        st = state.get(_STATE)
        if st is None:
            return error(f'cannot read "PreFilter{NAME}" from cycleState', NAME)
        st.conflicts += st.uses(pod_to_add)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        st = state.get(_STATE)
        if st is None:
            return error(f'cannot read "PreFilter{NAME}" from cycleState', NAME)
        st.conflicts -= st.uses(pod_to_remove)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if disk_conflict(pod, node_info):
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,), NAME)
        st = state.get(_STATE)
        if st is not None and st.conflicts > 0:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,), NAME)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), _pod_deleted_hint
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                _pvc_added_hint,
            ),
        )


SPEC = PluginSpec(NAME, VolumeRestrictions, None)
