"""The volume binder's decisions (kube-scheduler volumebinding binder.go), free of I/O.

`pod_volume_claims` sorts a pod's claims (GetPodVolumeClaims), `find_pod_volumes` says
whether one node can serve them and how (FindPodVolumes: bound claims' PV node affinity,
static matches with the PV controller's rules, dynamic provisioning with allowedTopologies
and CSIStorageCapacity), `assume` / `bindings_done` are AssumePodVolumes and
checkBindings. The plugin (volume_binding.py) wires these to the cycle and the API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from asched.api import Node, Pod
from asched.api.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PHASE_AVAILABLE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from asched.framework.listers import ObjectStore
from asched.plugins.volumes.assume import AssumeCache
from asched.plugins.volumes.csi_migration import (
    PLUGIN_OF_SOURCE,
    MigrationError,
    migrated_on_node,
    translated_affinity,
)

# binder.go ConflictReasons, in the order FindPodVolumes appends them.
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


class BinderError(Exception):
    """What Go's binder returns as an error: the framework reports it as an Error status."""


class ClaimProblem(Exception):
    """podHasPVCs' errors: the pod cannot be scheduled until the claim changes."""


@dataclass(slots=True)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay: list[PersistentVolumeClaim] = field(default_factory=list)
    # storage class -> the PVs of that class (assume cache view at PreFilter)
    volumes_by_class: dict[str, list[PersistentVolume]] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class StaticBinding:
    pv: PersistentVolume
    pvc: PersistentVolumeClaim


@dataclass(slots=True, frozen=True)
class DynamicProvision:
    pvc: PersistentVolumeClaim
    capacity: CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    static: list[StaticBinding] = field(default_factory=list)
    dynamic: list[DynamicProvision] = field(default_factory=list)


@dataclass(slots=True)
class Listers:
    """The caches the binder reads; PVs and PVCs go through the assume caches."""

    pvs: AssumeCache[PersistentVolume]
    pvcs: AssumeCache[PersistentVolumeClaim]
    classes: ObjectStore[StorageClass]
    drivers: ObjectStore[CSIDriver]
    capacities: ObjectStore[CSIStorageCapacity]
    csi_nodes: ObjectStore[CSINode]


def claim_names(pod: Pod) -> list[tuple[str, bool]]:
    """(claim name, is generic ephemeral) for each claim-backed volume of the pod."""
    out = []
    for v in pod.volumes:
        if v.source == "persistentVolumeClaim":
            out.append((v.claim_name, False))
        elif v.source == "ephemeral":
            # ephemeral.VolumeClaimName: <pod name>-<volume name>
            out.append((f"{pod.name}-{v.name}", True))
    return out


def check_claims(pod: Pod, listers: Listers) -> bool:
    """volume_binding.go podHasPVCs: True if the pod has claims; ClaimProblem names why
    one of them cannot be used yet, with Go's words."""
    names = claim_names(pod)
    for name, ephemeral in names:
        pvc = listers.pvcs.get(f"{pod.namespace}/{name}")
        if pvc is None:
            if ephemeral:
                raise ClaimProblem(
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{name}"'
                )
            raise ClaimProblem(f'persistentvolumeclaim "{name}" not found')
        if pvc.phase == "Lost":
            raise ClaimProblem(
                f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                f'"{pvc.volume_name}"'
            )
        if pvc.deleting:
            raise ClaimProblem(f'persistentvolumeclaim "{name}" is being deleted')
        if ephemeral and pod.uid not in pvc.owner_uids:
            raise ClaimProblem(
                f"PVC {pod.namespace}/{name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)"
            )
    return bool(names)


def delay_binding(pvc: PersistentVolumeClaim, classes: ObjectStore[StorageClass]) -> bool:
    """component-helpers IsDelayBindingMode: a missing class counts as Immediate."""
    if not pvc.storage_class:
        return False
    cls = classes.get(pvc.storage_class)
    return cls is not None and cls.binding_mode == WAIT_FOR_FIRST_CONSUMER


def pod_volume_claims(pod: Pod, listers: Listers) -> PodVolumeClaims:
    """GetPodVolumeClaims: bound, unbound Immediate (or prebound), unbound delayed."""
    out = PodVolumeClaims()
    for name, _ in claim_names(pod):
        pvc = listers.pvcs.get(f"{pod.namespace}/{name}")
        if pvc is None:
            raise BinderError(f'error getting PVC "{pod.namespace}/{name}": not found')
        if pvc.fully_bound:
            out.bound.append(pvc)
        elif delay_binding(pvc, listers.classes) and not pvc.volume_name:
            out.unbound_delay.append(pvc)
        else:
            out.unbound_immediate.append(pvc)
    if out.unbound_delay:
        all_pvs = listers.pvs.list()
        for pvc in out.unbound_delay:
            out.volumes_by_class[pvc.storage_class] = [
                pv for pv in all_pvs if pv.storage_class == pvc.storage_class
            ]
    return out


def pv_fits_node(pv: PersistentVolume, node: Node) -> bool:
    """CheckNodeAffinity: no required affinity fits every node."""
    return pv.node_affinity is None or pv.node_affinity.matches(node.labels, node.name)


def _bound_pv_fits_node(pv: PersistentVolume, node: Node, listers: Listers) -> bool:
    """checkBoundClaims: CheckNodeAffinity on the PV as tryTranslatePVToCSI leaves it (an
    in-tree PV migrated on the node is checked under its CSI driver's topology key)."""
    if pv.in_tree is None:
        return pv_fits_node(pv, node)
    csi_node = listers.csi_nodes.get(node.name)
    plugin = PLUGIN_OF_SOURCE[pv.in_tree.kind]
    if csi_node is None or not migrated_on_node(plugin, csi_node.annotations):
        return pv_fits_node(pv, node)
    try:
        affinity = translated_affinity(pv)
    except MigrationError as exc:
        raise BinderError(f"could not translate pv: {exc}") from exc
    return affinity is None or affinity.matches(node.labels, node.name)


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    node: Node,
    excluded: Mapping[str, PersistentVolume],
) -> PersistentVolume | None:
    """component-helpers FindMatchingVolume on the scheduler path (node given, delayed
    binding): a PV prebound to the claim wins; else the smallest available PV of the
    claim's class, selector, volume mode and access modes whose node affinity fits."""
    requested = pvc.request or 0
    smallest: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        prebound = pv.bound_to(pvc)
        if pv.claim_ref is not None and not prebound:
            continue
        if pv.capacity < requested or pv.volume_mode != pvc.volume_mode:
            continue
        if pvc.attributes_class != pv.attributes_class or pv.deleting:
            continue
        fits = pv_fits_node(pv, node)
        if prebound:
            return pv if fits else None
        if pv.phase != PHASE_AVAILABLE:
            continue
        if pvc.selector is not None and not pvc.selector.matches(pv.labels or {}):
            continue
        if pv.storage_class != pvc.storage_class or not fits:
            continue
        if not pvc.access_modes <= pv.access_modes:
            continue
        if smallest is None or pv.capacity < smallest.capacity:
            smallest = pv
    return smallest


def _enough_capacity(
    pvc: PersistentVolumeClaim, cls: StorageClass, node: Node, listers: Listers
) -> tuple[bool, CSIStorageCapacity | None]:
    """hasEnoughCapacity: only CSI drivers with storageCapacity: true are checked."""
    if pvc.request is None:
        return True, None
    driver = listers.drivers.get(cls.provisioner)
    if driver is None or not driver.storage_capacity:
        return True, None
    for cap in listers.capacities.list():
        if (
            cap.storage_class == cls.name
            and cap.sufficient(pvc.request)
            and cap.reaches(node.labels)
        ):
            return True, cap
    return False, None


def _check_provisions(
    claims: Sequence[PersistentVolumeClaim], node: Node, listers: Listers
) -> tuple[bool, bool, list[DynamicProvision]]:
    """checkVolumeProvisions -> (provision satisfied, sufficient storage, provisions)."""
    provisions = []
    for pvc in claims:
        if not pvc.storage_class:
            raise BinderError(f'no class for claim "{pvc.key}"')
        cls = listers.classes.get(pvc.storage_class)
        if cls is None:
            raise BinderError(f'failed to find storage class "{pvc.storage_class}"')
        if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
            return False, True, []
        if not cls.topology_allows(node.labels):
            return False, True, []
        enough, cap = _enough_capacity(pvc, cls, node, listers)
        if not enough:
            return True, False, []
        provisions.append(DynamicProvision(pvc, cap))
    return True, True, provisions


def find_pod_volumes(
    claims: PodVolumeClaims, node: Node, listers: Listers
) -> tuple[PodVolumes, list[str]]:
    """FindPodVolumes: how `node` would serve the pod's claims, or the conflict reasons."""
    result = PodVolumes()
    bound_ok = unbound_ok = storage_ok = pvs_found = True
    for pvc in claims.bound:
        pv = listers.pvs.get(pvc.volume_name)
        if pv is None:
            pvs_found = False
            break
        if not _bound_pv_fits_node(pv, node, listers):
            bound_ok = False
            break
    if claims.unbound_delay:
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for pvc in claims.unbound_delay:
            selected = pvc.selected_node
            if selected is not None:
                if selected != node.name:
                    return result, [ERR_REASON_BIND_CONFLICT]
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        if to_match:
            chosen: dict[str, PersistentVolume] = {}
            # byPVCSize: smallest requests pick first, so they take the smallest PVs.
            for pvc in sorted(to_match, key=lambda c: c.request or 0):
                pv = find_matching_volume(
                    pvc, claims.volumes_by_class.get(pvc.storage_class, ()), node, chosen
                )
                if pv is None:
                    unbound_ok = False
                    to_provision.append(pvc)
                    continue
                chosen[pv.name] = pv
                result.static.append(StaticBinding(pv, pvc))
        if to_provision:
            unbound_ok, storage_ok, result.dynamic = _check_provisions(to_provision, node, listers)
    reasons = []
    if not bound_ok:
        reasons.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(ERR_REASON_BIND_CONFLICT)
    if not storage_ok:
        reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not pvs_found:
        reasons.append(ERR_REASON_PV_NOT_EXIST)
    return result, reasons


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """GetBindVolumeToClaim: the PV with its claimRef set and bound-by-controller."""
    annotations = dict(pv.annotations or {})
    annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
    return replace(
        pv, claim_ref=ClaimRef(pvc.namespace, pvc.name, pvc.uid), annotations=annotations
    )


def with_selected_node(pvc: PersistentVolumeClaim, node_name: str) -> PersistentVolumeClaim:
    annotations = dict(pvc.annotations or {})
    annotations[ANN_SELECTED_NODE] = node_name
    return replace(pvc, annotations=annotations)


def bindings_done(volumes: PodVolumes, node: Node, listers: Listers) -> bool:
    """checkBindings: True once every claim is fully bound to a PV that fits the node;
    BinderError when the binding was undone (claimRef or selected-node reset, or the
    provisioner gave up)."""
    for b in volumes.static:
        pv = listers.pvs.get(b.pv.name)
        if pv is None or pv.claim_ref is None:
            raise BinderError(f'ClaimRef got reset for pv "{b.pv.name}"')
        pvc = listers.pvcs.get(b.pvc.key)
        if pvc is None or not pvc.fully_bound:
            return False
    for d in volumes.dynamic:
        pvc = listers.pvcs.get(d.pvc.key)
        if pvc is None:
            raise BinderError(f'failed to check provisioning pvc: "{d.pvc.key}" not found')
        if pvc.selected_node is None:
            raise BinderError(f'selectedNode annotation reset for PVC "{d.pvc.name}"')
        if not pvc.fully_bound:
            return False
        pv = listers.pvs.get(pvc.volume_name)
        if pv is None:
            return False
        if not _bound_pv_fits_node(pv, node, listers):
            raise BinderError(
                f'pv "{pv.name}" node affinity doesn\'t match node "{node.name}": '
                "no matching NodeSelectorTerms"
            )
    return True
