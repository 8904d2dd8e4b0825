"""Kubernetes 1.37's native gang API (scheduling.k8s.io/v1beta1 PodGroup and Workload).

A pod joins a group through `spec.schedulingGroup.podGroupName` (same namespace). The
PodGroup carries the policy: `schedulingPolicy.gang.minCount` (all-or-nothing, minCount
mutable) or `schedulingPolicy.basic` (no gang semantics), and optionally
`schedulingConstraints.topology[0].key` (every member inside one domain of that node
label). A Workload holds the templates PodGroups are made from; the scheduler itself
reads only PodGroups (as kube-scheduler does), Workloads are decoded to report bad ones.

The API is beta and off by default (GenericWorkload gate, plus the group version in
--runtime-config); on a cluster that does not serve it the informers stay empty and pods
never carry the field (the API server drops a gated field).

A PodGroup may also name ResourceClaims its pods share (`spec.resourceClaims`, gate
DRAWorkloadResourceClaims, beta and off in 1.37); the API server drops the field with the
gate off, so a PodGroup decoded here simply has none.

This API is distinct from scheduler-plugins' scheduling.x-k8s.io PodGroup
(asched/api/podgroup.py); both feed asched's gang engines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.api.errors import DecodeError
from asched.api.meta import parse_time
from asched.api.podgroup import ObjectRef

GROUP = "scheduling.k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
POD_GROUP_KIND = "PodGroup"
WORKLOAD_KIND = "Workload"

# status.conditions types and reasons (k8s.io/api scheduling/v1beta1).
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"

DISRUPTION_SINGLE = "Single"
DISRUPTION_ALL = "All"


@dataclass(slots=True, frozen=True)
class Condition:
    """A metav1.Condition as the API holds it (times kept as written)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    observed_generation: int = 0
    last_transition_time: str = ""


@dataclass(slots=True, frozen=True)
class PodGroupClaim:
    """One `spec.resourceClaims[]` entry (PodGroupResourceClaim): exactly one of the claim
    and the template is set, which validation enforces; a pod shares it by listing an
    entry with the same name, claim name and template name."""

    name: str
    claim_name: str | None = None
    template_name: str | None = None


@dataclass(slots=True)
class NativePodGroup:
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: float = 0.0
    # None for the basic policy: the members are scheduled one by one, no quorum.
    min_count: int | None = None
    # The one topology constraint's node label key, "" for none.
    topology_key: str = ""
    disruption_mode: str = DISRUPTION_SINGLE
    priority: int | None = None
    workload_name: str = ""
    template_name: str = ""
    conditions: tuple[Condition, ...] = ()
    # spec.parentCompositePodGroupName (same namespace), "" for a root group. The API
    # server keeps it only with the CompositePodGroup gate on; asched reads it only then.
    parent: str = ""
    # spec.resourceClaims, in spec order, and status.resourceClaimStatuses (entry name ->
    # generated claim name, None when the controller decided none was needed).
    resource_claims: tuple[PodGroupClaim, ...] = ()
    resource_claim_statuses: dict[str, str | None] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_gang(self) -> bool:
        return self.min_count is not None

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    def ref(self) -> ObjectRef:
        return ObjectRef(POD_GROUP_KIND, self.namespace, self.name, self.uid, API_VERSION)


@dataclass(slots=True, frozen=True)
class PodGroupTemplate:
    name: str
    min_count: int | None
    topology_key: str = ""


@dataclass(slots=True)
class Workload:
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    templates: tuple[PodGroupTemplate, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _obj(raw: Any, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object, got {type(raw).__name__}")
    return raw


def _policy(raw: Any, path: str, count: str = "minCount") -> int | None:
    """schedulingPolicy -> the gang's `count` (minCount, or a composite's minGroupCount)
    or None (basic); exactly one must be set."""
    policy = _obj(raw, path)
    gang, basic = policy.get("gang"), policy.get("basic")
    if (gang is None) == (basic is None):
        raise ValueError(f"{path}: exactly one of basic and gang must be set")
    if gang is None:
        return None
    value = _obj(gang, f"{path}.gang").get(count)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}.gang.{count}: expected an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{path}.gang.{count}: must be a positive integer, got {value}")
    return value


def _priority(spec: dict[str, Any]) -> int | None:
    priority = spec.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise ValueError(f"spec.priority: expected an integer, got {priority!r}")
    return priority


def _topology(raw: Any, path: str) -> str:
    constraints = _obj(raw, path)
    topology = constraints.get("topology") or []
    if not isinstance(topology, list):
        raise ValueError(f"{path}.topology: expected a list")
    if len(topology) > 1:
        # PodGroupSchedulingConstraints: "Currently only a single topology constraint".
        raise ValueError(f"{path}.topology: at most one constraint, got {len(topology)}")
    if not topology:
        return ""
    key = _obj(topology[0], f"{path}.topology[0]").get("key")
    if not isinstance(key, str) or not key:
        raise ValueError(f"{path}.topology[0].key: a node label key is required")
    return key


def _disruption(raw: Any, path: str) -> str:
    mode = _obj(raw, path)
    if not mode:
        return DISRUPTION_SINGLE  # +default={"single": {}}
    if ("single" in mode) == ("all" in mode):
        raise ValueError(f"{path}: exactly one of single and all must be set")
    return DISRUPTION_ALL if "all" in mode else DISRUPTION_SINGLE


def _conditions(raw: Any) -> tuple[Condition, ...]:
    out = []
    for c in _obj(raw, "status").get("conditions") or ():
        if not isinstance(c, dict):
            continue
        out.append(
            Condition(
                type=str(c.get("type") or ""),
                status=str(c.get("status") or ""),
                reason=str(c.get("reason") or ""),
                message=str(c.get("message") or ""),
                observed_generation=int(c.get("observedGeneration") or 0),
                last_transition_time=str(c.get("lastTransitionTime") or ""),
            )
        )
    return tuple(out)


def _label(entry: dict[str, Any], path: str) -> str:
    """An entry's required `name`."""
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{path}.name: a DNS label is required")
    return name


def _optional_name(raw: Any, path: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw:
        raise ValueError(f"{path}: expected a non-empty name, got {raw!r}")
    return raw


def _claims(raw: Any, path: str) -> tuple[PodGroupClaim, ...]:
    """spec.resourceClaims: the shape only; kube-apiserver validated the rest."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list")
    out = []
    for i, raw_c in enumerate(raw):
        c = _obj(raw_c, f"{path}[{i}]")
        out.append(
            PodGroupClaim(
                name=_label(c, f"{path}[{i}]"),
                claim_name=_optional_name(
                    c.get("resourceClaimName"), f"{path}[{i}].resourceClaimName"
                ),
                template_name=_optional_name(
                    c.get("resourceClaimTemplateName"), f"{path}[{i}].resourceClaimTemplateName"
                ),
            )
        )
    return tuple(out)


def _claim_statuses(raw: Any) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for i, raw_s in enumerate(_obj(raw, "status").get("resourceClaimStatuses") or ()):
        path = f"status.resourceClaimStatuses[{i}]"
        st = _obj(raw_s, path)
        out[_label(st, path)] = _optional_name(
            st.get("resourceClaimName"), f"{path}.resourceClaimName"
        )
    return out


def _fail(kind: str, key: str, exc: Exception) -> DecodeError:
    msg = str(exc)
    field_path, _, detail = msg.partition(": ")
    if not detail:
        field_path, detail = "spec", msg
    return DecodeError(kind, key, field_path, detail)


def decode_native_podgroup(raw: dict[str, Any]) -> NativePodGroup:
    """Decode a scheduling.k8s.io/v1beta1 PodGroup; raises DecodeError naming the field."""
    meta = raw.get("metadata") or {}
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    try:
        spec = _obj(raw.get("spec"), "spec")
        ref = _obj(spec.get("workloadRef"), "spec.workloadRef")
        return NativePodGroup(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            generation=int(meta.get("generation") or 0),
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
            min_count=_policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy"),
            topology_key=_topology(spec.get("schedulingConstraints"), "spec.schedulingConstraints"),
            disruption_mode=_disruption(spec.get("disruptionMode"), "spec.disruptionMode"),
            priority=_priority(spec),
            workload_name=str(ref.get("workloadName") or ""),
            template_name=str(ref.get("templateName") or ""),
            conditions=_conditions(raw.get("status")),
            parent=_optional_name(
                spec.get("parentCompositePodGroupName"), "spec.parentCompositePodGroupName"
            )
            or "",
            resource_claims=_claims(spec.get("resourceClaims"), "spec.resourceClaims"),
            resource_claim_statuses=_claim_statuses(raw.get("status")),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        raise _fail(POD_GROUP_KIND, key, exc) from None


def decode_workload(raw: dict[str, Any]) -> Workload:
    """Decode a scheduling.k8s.io/v1beta1 Workload; raises DecodeError naming the field."""
    meta = raw.get("metadata") or {}
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    try:
        spec = _obj(raw.get("spec"), "spec")
        raw_templates = spec.get("podGroupTemplates") or []
        if not isinstance(raw_templates, list):
            raise ValueError("spec.podGroupTemplates: expected a list")
        templates = []
        for i, raw_t in enumerate(raw_templates):
            path = f"spec.podGroupTemplates[{i}]"
            t = _obj(raw_t, path)
            templates.append(
                PodGroupTemplate(
                    name=_label(t, path),
                    min_count=_policy(t.get("schedulingPolicy"), f"{path}.schedulingPolicy"),
                    topology_key=_topology(
                        t.get("schedulingConstraints"), f"{path}.schedulingConstraints"
                    ),
                )
            )
        return Workload(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            templates=tuple(templates),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        raise _fail(WORKLOAD_KIND, key, exc) from None
