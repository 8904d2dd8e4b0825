"""VolumeBinding: place pods with PersistentVolumeClaims where their volumes can be.

Follows kube-scheduler's volumebinding plugin (volume_binding.go) over the binder's
decisions in binder.go:
- PreFilter: claims that are missing, lost, being deleted, or unbound with Immediate
  binding make the pod UnschedulableAndUnresolvable with Go's messages; pods without
  claims Skip.
- Filter: bound claims' PVs must accept the node (nodeAffinity); WaitForFirstConsumer
  claims need a matching available PV (the PV controller's rules) or a provisioner whose
  allowedTopologies and CSIStorageCapacity reach the node.
- Reserve assumes the chosen PVs / selected nodes in the assume caches, so the next pod
  cannot take the same PV; Unreserve restores them.
- PreBind writes them (PV claimRef for static bindings, the selected-node annotation for
  provisioning) and waits, up to bindTimeoutSeconds, until the PV controller has bound
  every claim. This is the only point that awaits the API.

- Score (StorageCapacityScoring, beta and on in 1.37): the node's static bindings (or,
  without any, its provisioned claims with a CSIStorageCapacity) give a utilization per
  storage class, requested/capacity, mapped through `shape` (default: 0% -> 10, 100% -> 0
  on the 0-10 scale, so the roomiest volumes win) and averaged over the classes.

CSI migration: a bound in-tree PV is checked with its topology translated on nodes whose
CSINode lists its plugin as migrated (tryTranslatePVToCSI, csi_migration.py).

Not built: the PreBindPreFlight point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Self

from asched.api import Pod
from asched.api.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageClass,
)
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
    PreBindPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import ArgsError, PluginSpec
from asched.framework.signatures import VOLUMES, SignFragment, SignResult, volumes
from asched.framework.status import Code, Status, error, skip
from asched.framework.types import PreFilterResult
from asched.plugins.helpers import check_fields, field_path, read_int
from asched.plugins.noderesources.args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    UtilizationShapePoint,
    parse_shape,
)
from asched.plugins.noderesources.scorers import broken_linear
from asched.plugins.volumes.assume import AssumeCache
from asched.plugins.volumes.binder import (
    ERR_UNBOUND_IMMEDIATE,
    BinderError,
    ClaimProblem,
    Listers,
    PodVolumeClaims,
    PodVolumes,
    bind_volume_to_claim,
    bindings_done,
    check_claims,
    claim_names,
    find_pod_volumes,
    pod_volume_claims,
    with_selected_node,
)
from asched.plugins.volumes.informers import (
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    VOLUME_BINDING_INFORMERS,
)

NAME = "VolumeBinding"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
# wait.PollUntilContextTimeout's interval in volumeBinder.BindPodVolumes.
BIND_POLL_SECONDS = 1.0
MAX_UTILIZATION = 100
MAX_NODE_SCORE = 100
# The v1 defaults' shape when StorageCapacityScoring is on (SetDefaults_VolumeBindingArgs).
DEFAULT_SHAPE = (
    UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE),
    UtilizationShapePoint(MAX_UTILIZATION, 0),
)


def capacity_scorer(
    shape: tuple[UtilizationShapePoint, ...],
) -> Callable[[Mapping[str, tuple[int, int]]], int]:
    """buildScorerFunction: class -> (requested, capacity) to a 0-100 node score."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear([(p.utilization, p.score * factor) for p in shape])

    def one(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(classes: Mapping[str, tuple[int, int]]) -> int:
        if not classes:
            return 0
        total = sum(one(r, c) for r, c in classes.values())
        # math.Round: halves away from zero (scores are never negative).
        return int(Decimal(total) / Decimal(len(classes)) + Decimal("0.5"))

    return score


def class_resources(volumes: PodVolumes) -> dict[str, tuple[int, int]]:
    """VolumeBinding.Score's classResources: static bindings if any, else provisions
    that have a CSIStorageCapacity."""
    out: dict[str, tuple[int, int]] = {}
    if volumes.static:
        for b in volumes.static:
            r, c = out.get(b.pv.storage_class, (0, 0))
            out[b.pv.storage_class] = (r + (b.pvc.request or 0), c + b.pv.capacity)
        return out
    for d in volumes.dynamic:
        if d.capacity is None:
            continue
        r, _ = out.get(d.pvc.storage_class, (0, 0))
        out[d.pvc.storage_class] = (r + (d.pvc.request or 0), d.capacity.capacity or 0)
    return out


_SKIP = skip(NAME)


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("bindTimeoutSeconds", "shape"), path)
        timeout = read_int(raw, "bindTimeoutSeconds", path, DEFAULT_BIND_TIMEOUT_SECONDS)
        if timeout < 0:
            raise ArgsError(
                field_path(path, "bindTimeoutSeconds"),
                f"Invalid value: {timeout}: invalid BindTimeoutSeconds, "
                "should not be a negative value",
            )
        shape = parse_shape(raw, path) if raw.get("shape") is not None else None
        return cls(timeout, shape)


Args = VolumeBindingArgs


@dataclass(slots=True)
class _State:
    """volume_binding.go stateData: the claims, and per feasible node how to serve them."""

    claims: PodVolumeClaims | None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = True
    reserved: PodVolumes | None = None


_STATE: StateKey[_State] = StateKey("PreFilter" + NAME)


def _pvc_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeClaimChange: one of the pod's own claims."""
    pvc = new if isinstance(new, PersistentVolumeClaim) else old
    if not isinstance(pvc, PersistentVolumeClaim) or pvc.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    names = {n for n, _ in claim_names(pod)}
    return QueueingHint.QUEUE if pvc.name in names else QueueingHint.QUEUE_SKIP


def _class_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterStorageClassChange: created, or allowedTopologies changed."""
    if not isinstance(old, StorageClass) or not isinstance(new, StorageClass):
        return QueueingHint.QUEUE
    if old.allowed_topologies != new.allowed_topologies:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"


def _csi_node_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterCSINodeChange: created, or its migrated-plugins annotation changed."""
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return QueueingHint.QUEUE
    if (old.annotations or {}).get(_MIGRATED) != (new.annotations or {}).get(_MIGRATED):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _capacity_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterCSIStorageCapacityChange: created, or its volume limit grew."""
    if not isinstance(old, CSIStorageCapacity) or not isinstance(new, CSIStorageCapacity):
        return QueueingHint.QUEUE

    def limit(c: CSIStorageCapacity) -> int | None:
        return c.maximum_volume_size if c.maximum_volume_size is not None else c.capacity

    old_limit, new_limit = limit(old), limit(new)
    if new_limit is not None and (old_limit is None or new_limit > old_limit):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _driver_hint(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    """isSchedulableAfterCSIDriverChange: storage capacity tracking was switched off for
    the driver of one of the pod's in-line CSI volumes."""
    if not isinstance(old, CSIDriver) or not isinstance(new, CSIDriver):
        return QueueingHint.QUEUE
    if not any(v.source == "csi" and v.csi_driver == new.name for v in pod.volumes):
        return QueueingHint.QUEUE_SKIP
    if old.storage_capacity and not new.storage_capacity:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_ADD_UPDATE = ActionType.ADD | ActionType.UPDATE
EVENTS: tuple[ClusterEventWithHint, ...] = (
    ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, _ADD_UPDATE), _class_hint),
    ClusterEventWithHint(
        ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, _ADD_UPDATE), _pvc_hint
    ),
    ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, _ADD_UPDATE)),
    ClusterEventWithHint(
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    ),
    ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, _ADD_UPDATE), _csi_node_hint),
    ClusterEventWithHint(ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE), _driver_hint),
    ClusterEventWithHint(
        ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, _ADD_UPDATE), _capacity_hint
    ),
)


class VolumeBinding(
    PreFilterPlugin,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
):
    def __init__(self, args: VolumeBindingArgs | None, handle: Handle) -> None:
        self._args = args or VolumeBindingArgs()
        self._handle = handle
        self._scorer = capacity_scorer(self._args.shape or DEFAULT_SHAPE)
        # Built on first use: the stores exist once the scheduler has started the
        # informers this plugin names, and plugins that never see a claim never read them.
        self._lazy: Listers | None = None

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """VolumeBinding.SignPod."""
        return (SignFragment(VOLUMES, volumes(pod)),)

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return VOLUME_BINDING_INFORMERS

    @property
    def _listers(self) -> Listers:
        if self._lazy is None:
            h = self._handle
            self._lazy = Listers(
                pvs=AssumeCache(h.store(PERSISTENT_VOLUMES)),
                pvcs=AssumeCache(h.store(PERSISTENT_VOLUME_CLAIMS)),
                classes=h.store(STORAGE_CLASSES),
                drivers=h.store(CSI_DRIVERS),
                capacities=h.store(CSI_STORAGE_CAPACITIES),
                csi_nodes=h.store(CSI_NODES),
            )
        return self._lazy

    # ---- PreFilter / Filter ----------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not claim_names(pod):
            state.write(_STATE, _State(None))
            return None, _SKIP
        try:
            check_claims(pod, self._listers)
            claims = pod_volume_claims(pod, self._listers)
        except ClaimProblem as exc:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),), NAME)
        except BinderError as exc:
            return None, error(str(exc), NAME)
        if claims.unbound_immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNBOUND_IMMEDIATE,), NAME)
        state.write(_STATE, _State(claims))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        st = state.get(_STATE)
        if st is None:
            return error(f'reading "PreFilter{NAME}" from cycleState: not found', NAME)
        if st.claims is None:
            return None
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        try:
            volumes, reasons = find_pod_volumes(st.claims, node, self._listers)
        except BinderError as exc:
            return error(str(exc), NAME)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons), NAME)
        st.by_node[node_info.name] = volumes
        return None

    # ---- PreScore / Score ------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        # Go scores every pod once StorageCapacityScoring is on; a pod without claims gets
        # 0 on every node there, which changes no ranking, so it skips here.
        st = state.get(_STATE)
        return _SKIP if st is None or st.claims is None else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        st = state.get(_STATE)
        volumes = None if st is None else st.by_node.get(node_info.name)
        return 0 if volumes is None else self._scorer(class_resources(volumes))

    # ---- Reserve ---------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """AssumePodVolumes: the chosen PVs and selected node, visible to the next cycle."""
        st = state.get(_STATE)
        if st is None or st.claims is None:
            return None
        volumes = st.by_node.get(node_name)
        if volumes is None:
            return error(f'no volumes found for node "{node_name}"', NAME)
        st.all_bound = not volumes.static and not volumes.dynamic
        if st.all_bound:
            return None
        for b in volumes.static:
            self._listers.pvs.assume(bind_volume_to_claim(b.pv, b.pvc))
        for d in volumes.dynamic:
            self._listers.pvcs.assume(with_selected_node(d.pvc, node_name))
        st.reserved = volumes
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """RevertAssumedPodVolumes; idempotent."""
        st = state.get(_STATE)
        if st is None or st.reserved is None:
            return
        for b in st.reserved.static:
            self._listers.pvs.restore(b.pv.key)
        for d in st.reserved.dynamic:
            self._listers.pvcs.restore(d.pvc.key)

    # ---- PreBind ---------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Go's PreBindPreFlight: work to do unless Reserve found every claim bound."""
        st = state.get(_STATE)
        if st is None or st.all_bound:
            return skip(NAME)
        if node_name not in st.by_node:
            return error(f'no pod volume found for node "{node_name}"', NAME)
        return None

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """BindPodVolumes: write the bindings, then wait for the PV controller."""
        st = state.get(_STATE)
        if st is None or st.all_bound or st.reserved is None:
            return None
        volumes = st.reserved
        # A failed write propagates: the framework's PreBind runner makes it an Error status
        # (Go: return fwk.AsStatus(err)) and logs it once with its kind.
        await self._write(volumes, node_name)
        node_info = self._handle.snapshot.get(node_name)
        node = None if node_info is None else node_info.node
        if node is None:
            return error(f'binding volumes: failed to get node "{node_name}"', NAME)
        clock = self._handle.clock
        deadline = clock.now() + self._args.bind_timeout_seconds
        while True:
            try:
                if bindings_done(volumes, node, self._listers):
                    return None
            except BinderError as exc:
                return error(f"binding volumes: {exc}", NAME)
            if clock.now() >= deadline:
                return error("binding volumes: context deadline exceeded", NAME)
            await clock.sleep(BIND_POLL_SECONDS)

    async def _write(self, volumes: PodVolumes, node_name: str) -> None:
        """bindAPIUpdate: PV claimRefs first, then the claims to provision.

        Merge patches carry the resourceVersion the decision was made on, so a PV that
        changed meanwhile (another scheduler took it) is a 409, like Go's Update."""
        client = self._handle.client
        for b in volumes.static:
            pvc = b.pvc
            body = {
                "metadata": {
                    "resourceVersion": b.pv.resource_version,
                    "annotations": {ANN_BOUND_BY_CONTROLLER: "yes"},
                },
                "spec": {
                    "claimRef": {
                        "kind": "PersistentVolumeClaim",
                        "apiVersion": "v1",
                        "namespace": pvc.namespace,
                        "name": pvc.name,
                        "uid": pvc.uid,
                        "resourceVersion": pvc.resource_version,
                    }
                },
            }
            await client.request(
                "PATCH",
                f"/api/v1/persistentvolumes/{b.pv.name}",
                body=body,
                content_type="application/merge-patch+json",
            )
        for d in volumes.dynamic:
            pvc = d.pvc
            body = {
                "metadata": {
                    "resourceVersion": pvc.resource_version,
                    "annotations": {ANN_SELECTED_NODE: node_name},
                }
            }
            await client.request(
                "PATCH",
                f"/api/v1/namespaces/{pvc.namespace}/persistentvolumeclaims/{pvc.name}",
                body=body,
                content_type="application/merge-patch+json",
            )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return EVENTS


SPEC = PluginSpec(NAME, VolumeBinding, VolumeBindingArgs)
