"""Storage objects the volume plugins read: PV, PVC, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity, each decoded once per version into a slotted object.

Only what kube-scheduler's volume plugins and the PV controller's matching rules
(component-helpers storage/volume FindMatchingVolume) read is kept. Quantities become
bytes, selectors and node affinity are parsed here, so plugins never walk JSON. An object
that cannot be read raises DecodeError naming its kind, key and field; the informer
reports it and keeps going.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from asched.api.errors import DecodeError
from asched.api.intree import IN_TREE_IDENTS, InTreeSource, parse_in_tree
from asched.api.labels import (
    LabelSelector,
    NodeSelector,
    parse_label_selector,
    parse_node_selector,
)
from asched.api.meta import str_map
from asched.api.quantity import parse_quantity

# core/v1 well-known names (k8s.io/api core/v1 and component-helpers storage/volume).
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"
FILESYSTEM = "Filesystem"
PHASE_AVAILABLE = "Available"
CLAIM_LOST = "Lost"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

# The in-line / PV volume source kinds that VolumeRestrictions and NodeVolumeLimits look at.
_PV_SOURCES = (
    "csi",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "azureDisk",
    "cinder",
    "rbd",
    "iscsi",
    "hostPath",
    "local",
    "nfs",
)


@dataclass(slots=True, frozen=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""


@dataclass(slots=True, frozen=True)
class PersistentVolume:
    name: str
    resource_version: str = ""
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None
    capacity: int = 0  # spec.capacity.storage in bytes
    access_modes: frozenset[str] = frozenset()
    volume_mode: str = FILESYSTEM
    storage_class: str = ""  # the beta annotation first, like GetPersistentVolumeClass
    node_affinity: NodeSelector | None = None
    claim_ref: ClaimRef | None = None
    phase: str = ""
    deleting: bool = False
    source: str = ""  # csi, gcePersistentDisk, local, ...
    csi_driver: str = ""
    volume_handle: str = ""  # csi.volumeHandle, or the in-tree disk's id
    attributes_class: str = ""
    #: A source CSI migration translates (NodeVolumeLimits counts it as its CSI driver's).
    in_tree: InTreeSource | None = None

    @property
    def key(self) -> str:
        return self.name

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """component-helpers IsVolumeBoundToClaim."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid


@dataclass(slots=True, frozen=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    annotations: Mapping[str, str] | None = None
    storage_class: str = ""  # GetPersistentVolumeClaimClass
    access_modes: frozenset[str] = frozenset()
    request: int | None = None  # spec.resources.requests.storage in bytes
    volume_mode: str = FILESYSTEM
    selector: LabelSelector | None = None
    volume_name: str = ""
    phase: str = ""
    deleting: bool = False
    attributes_class: str = ""
    owner_uids: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def fully_bound(self) -> bool:
        """volumeBinder.isPVCFullyBound: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in (self.annotations or {})

    @property
    def selected_node(self) -> str | None:
        return (self.annotations or {}).get(ANN_SELECTED_NODE)


@dataclass(slots=True, frozen=True)
class TopologyRequirement:
    key: str
    values: frozenset[str]


@dataclass(slots=True, frozen=True)
class StorageClass:
    name: str
    provisioner: str = ""
    binding_mode: str = IMMEDIATE
    # Each term is a conjunction of label requirements; the terms are ORed.
    allowed_topologies: tuple[tuple[TopologyRequirement, ...], ...] = ()

    @property
    def key(self) -> str:
        return self.name

    def topology_allows(self, labels: Mapping[str, str]) -> bool:
        """v1helper.MatchTopologySelectorTerms: no terms allow every node."""
        if not self.allowed_topologies:
            return True
        return any(
            all(labels.get(r.key) in r.values for r in term) for term in self.allowed_topologies
        )


@dataclass(slots=True, frozen=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    allocatable: int | None = None  # allocatable.count; None means no limit reported
    topology_keys: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class CSINode:
    name: str
    drivers: Mapping[str, CSINodeDriver]
    annotations: Mapping[str, str] | None = None

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True, frozen=True)
class CSIDriver:
    name: str
    storage_capacity: bool = False
    attach_required: bool = True
    # spec.preventPodSchedulingIfMissing (VolumeLimitScaling, beta and on in 1.37): a pod
    # with the driver's volumes goes only to nodes whose CSINode lists the driver.
    prevent_scheduling_if_missing: bool = False

    @property
    def key(self) -> str:
        return self.name


@dataclass(slots=True, frozen=True)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class: str
    capacity: int | None = None
    maximum_volume_size: int | None = None
    node_topology: LabelSelector | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def sufficient(self, size: int) -> bool:
        """volumebinding capacitySufficient: maximumVolumeSize wins over capacity."""
        limit = self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity
        return limit is not None and limit >= size

    def reaches(self, labels: Mapping[str, str]) -> bool:
        """volumebinding nodeHasAccess: an absent topology selects no node."""
        return self.node_topology is not None and self.node_topology.matches(labels)


@dataclass(slots=True, frozen=True)
class VolumeAttachment:
    """storage.k8s.io/v1 VolumeAttachment: a volume attached (or being attached) to a node,
    which NodeVolumeLimits counts even when no pod on the node uses it any more."""

    name: str
    attacher: str = ""
    node_name: str = ""
    pv_name: str = ""  # spec.source.persistentVolumeName; empty for an in-line spec

    @property
    def key(self) -> str:
        return self.name


# ---- decoding ----------------------------------------------------------------------------

T = TypeVar("T")


def _decoding(kind: str, raw: dict[str, Any], build: Callable[[dict[str, Any]], T]) -> T:
    """Run `build` on the object; turn a ValueError "field: detail" into DecodeError."""
    meta = raw.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    key = f"{ns}/{name}" if ns else str(name)
    try:
        return build(meta)
    except (ValueError, TypeError, AttributeError) as exc:
        path, _, detail = str(exc).partition(": ")
        if not detail:
            path, detail = "spec", str(exc)
        raise DecodeError(kind, key, path, detail) from None


def _bytes(raw: Any, path: str) -> int | None:
    if raw is None:
        return None
    if not isinstance(raw, str | int | float) or isinstance(raw, bool):
        raise ValueError(f"{path}: expected a quantity, got {raw!r}")
    try:
        return parse_quantity(raw)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _modes(raw: Any, path: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(m, str) for m in raw):
        raise ValueError(f"{path}: expected a list of strings")
    return frozenset(raw)


def _obj(raw: Any, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    return raw


def _pv_source(spec: dict[str, Any]) -> tuple[str, str, str]:
    """(source kind, CSI driver, volume handle or disk id)."""
    for kind in _PV_SOURCES:
        src = spec.get(kind)
        if isinstance(src, dict):
            if kind == "csi":
                return kind, str(src.get("driver") or ""), str(src.get("volumeHandle") or "")
            ident = src.get("pdName") or src.get("volumeID") or src.get("image") or ""
            return kind, "", str(ident)
    return "", "", ""


def decode_pv(raw: dict[str, Any]) -> PersistentVolume:
    def build(meta: dict[str, Any]) -> PersistentVolume:
        spec = _obj(raw.get("spec"), "spec")
        status = _obj(raw.get("status"), "status")
        annotations = str_map(meta.get("annotations"), "metadata.annotations")
        capacity = _obj(spec.get("capacity"), "spec.capacity")
        affinity = _obj(spec.get("nodeAffinity"), "spec.nodeAffinity")
        ref = spec.get("claimRef")
        claim_ref = None
        if ref is not None:
            ref = _obj(ref, "spec.claimRef")
            claim_ref = ClaimRef(
                str(ref.get("namespace") or ""),
                str(ref.get("name") or ""),
                str(ref.get("uid") or ""),
            )
        source, driver, handle = _pv_source(spec)
        return PersistentVolume(
            name=str(meta.get("name") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            labels=str_map(meta.get("labels"), "metadata.labels"),
            annotations=annotations,
            capacity=_bytes(capacity.get("storage"), "spec.capacity.storage") or 0,
            access_modes=_modes(spec.get("accessModes"), "spec.accessModes"),
            volume_mode=str(spec.get("volumeMode") or FILESYSTEM),
            storage_class=annotations.get(
                BETA_STORAGE_CLASS_ANNOTATION, str(spec.get("storageClassName") or "")
            ),
            node_affinity=parse_node_selector(
                affinity.get("required"), "spec.nodeAffinity.required"
            ),
            claim_ref=claim_ref,
            phase=str(status.get("phase") or ""),
            deleting=meta.get("deletionTimestamp") is not None,
            source=source,
            csi_driver=driver,
            volume_handle=handle,
            attributes_class=str(spec.get("volumeAttributesClassName") or ""),
            in_tree=next(
                (
                    src
                    for kind in IN_TREE_IDENTS
                    if (src := parse_in_tree(kind, spec.get(kind))) is not None
                ),
                None,
            ),
        )

    return _decoding("PersistentVolume", raw, build)


def decode_pvc(raw: dict[str, Any]) -> PersistentVolumeClaim:
    def build(meta: dict[str, Any]) -> PersistentVolumeClaim:
        spec = _obj(raw.get("spec"), "spec")
        status = _obj(raw.get("status"), "status")
        annotations = str_map(meta.get("annotations"), "metadata.annotations")
        resources = _obj(spec.get("resources"), "spec.resources")
        requests = _obj(resources.get("requests"), "spec.resources.requests")
        return PersistentVolumeClaim(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            annotations=annotations,
            storage_class=annotations.get(
                BETA_STORAGE_CLASS_ANNOTATION, str(spec.get("storageClassName") or "")
            ),
            access_modes=_modes(spec.get("accessModes"), "spec.accessModes"),
            request=_bytes(requests.get("storage"), "spec.resources.requests.storage"),
            volume_mode=str(spec.get("volumeMode") or FILESYSTEM),
            selector=parse_label_selector(spec.get("selector"), "spec.selector"),
            volume_name=str(spec.get("volumeName") or ""),
            phase=str(status.get("phase") or ""),
            deleting=meta.get("deletionTimestamp") is not None,
            attributes_class=str(spec.get("volumeAttributesClassName") or ""),
            owner_uids=frozenset(
                str(o.get("uid") or "")
                for o in meta.get("ownerReferences") or ()
                if o.get("controller")
            ),
        )

    return _decoding("PersistentVolumeClaim", raw, build)


def _topology_terms(raw: Any) -> tuple[tuple[TopologyRequirement, ...], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError("allowedTopologies: expected a list")
    terms = []
    for i, term in enumerate(raw):
        exprs = _obj(term, f"allowedTopologies[{i}]").get("matchLabelExpressions") or []
        reqs = []
        for j, raw_expr in enumerate(exprs):
            path = f"allowedTopologies[{i}].matchLabelExpressions[{j}]"
            e = _obj(raw_expr, path)
            values = e.get("values") or []
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ValueError(f"{path}.values: expected a list of strings")
            reqs.append(TopologyRequirement(str(e.get("key") or ""), frozenset(values)))
        terms.append(tuple(reqs))
    return tuple(terms)


def decode_storage_class(raw: dict[str, Any]) -> StorageClass:
    def build(meta: dict[str, Any]) -> StorageClass:
        mode = raw.get("volumeBindingMode") or IMMEDIATE
        if mode not in (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER):
            raise ValueError(f"volumeBindingMode: unknown mode {mode!r}")
        return StorageClass(
            name=str(meta.get("name") or ""),
            provisioner=str(raw.get("provisioner") or ""),
            binding_mode=str(mode),
            allowed_topologies=_topology_terms(raw.get("allowedTopologies")),
        )

    return _decoding("StorageClass", raw, build)


def decode_csi_node(raw: dict[str, Any]) -> CSINode:
    def build(meta: dict[str, Any]) -> CSINode:
        spec = _obj(raw.get("spec"), "spec")
        drivers: dict[str, CSINodeDriver] = {}
        for i, raw_driver in enumerate(spec.get("drivers") or ()):
            path = f"spec.drivers[{i}]"
            d = _obj(raw_driver, path)
            count = _obj(d.get("allocatable"), f"{path}.allocatable").get("count")
            if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
                raise ValueError(f"{path}.allocatable.count: expected an integer, got {count!r}")
            name = str(d.get("name") or "")
            drivers[name] = CSINodeDriver(
                name,
                str(d.get("nodeID") or ""),
                count,
                tuple(str(k) for k in d.get("topologyKeys") or ()),
            )
        return CSINode(
            str(meta.get("name") or ""),
            drivers,
            str_map(meta.get("annotations"), "metadata.annotations"),
        )

    return _decoding("CSINode", raw, build)


def decode_csi_driver(raw: dict[str, Any]) -> CSIDriver:
    def build(meta: dict[str, Any]) -> CSIDriver:
        spec = _obj(raw.get("spec"), "spec")
        attach = spec.get("attachRequired")
        return CSIDriver(
            str(meta.get("name") or ""),
            spec.get("storageCapacity") is True,
            True if attach is None else bool(attach),
            spec.get("preventPodSchedulingIfMissing") is True,
        )

    return _decoding("CSIDriver", raw, build)


def decode_csi_storage_capacity(raw: dict[str, Any]) -> CSIStorageCapacity:
    def build(meta: dict[str, Any]) -> CSIStorageCapacity:
        return CSIStorageCapacity(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            storage_class=str(raw.get("storageClassName") or ""),
            capacity=_bytes(raw.get("capacity"), "capacity"),
            maximum_volume_size=_bytes(raw.get("maximumVolumeSize"), "maximumVolumeSize"),
            node_topology=parse_label_selector(raw.get("nodeTopology"), "nodeTopology"),
        )

    return _decoding("CSIStorageCapacity", raw, build)


def decode_volume_attachment(raw: dict[str, Any]) -> VolumeAttachment:
    def build(meta: dict[str, Any]) -> VolumeAttachment:
        spec = _obj(raw.get("spec"), "spec")
        source = _obj(spec.get("source"), "spec.source")
        return VolumeAttachment(
            str(meta.get("name") or ""),
            str(spec.get("attacher") or ""),
            str(spec.get("nodeName") or ""),
            str(source.get("persistentVolumeName") or ""),
        )

    return _decoding("VolumeAttachment", raw, build)
