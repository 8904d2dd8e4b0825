"""Kubernetes 1.37's CompositePodGroup (scheduling.k8s.io/v1alpha3), decoded once.

A CompositePodGroup groups PodGroups (and other CompositePodGroups) that must be placed
together: its children name it in `spec.parentCompositePodGroupName` (same namespace),
and its `schedulingPolicy.gang.minGroupCount` says how many children must be placed at
once (`basic`: each child on its own, Go counts it as one). Pods still join PodGroups;
a composite owns no pod itself. Alpha in 1.37, gate CompositePodGroup (which needs
GenericWorkload and TopologyAwareWorkloadScheduling) and the group version in
--runtime-config; on a cluster without it the informer stays empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asched.api.meta import parse_time
from asched.api.podgroup import ObjectRef
from asched.api.workload import (
    DISRUPTION_SINGLE,
    GROUP,
    Condition,
    _conditions,
    _disruption,
    _fail,
    _obj,
    _optional_name,
    _policy,
    _priority,
    _topology,
)

VERSION = "v1alpha3"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "CompositePodGroup"


@dataclass(slots=True)
class CompositePodGroup:
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: float = 0.0
    # spec.parentCompositePodGroupName, "" for the root of a hierarchy.
    parent: str = ""
    # None for the basic policy (Go's getMinCount then counts 1 child).
    min_group_count: int | None = None
    # The one topology constraint's node label key, "" for none.
    topology_key: str = ""
    disruption_mode: str = DISRUPTION_SINGLE
    priority: int | None = None
    workload_name: str = ""
    template_name: str = ""
    conditions: tuple[Condition, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def ref(self) -> ObjectRef:
        return ObjectRef(KIND, self.namespace, self.name, self.uid, API_VERSION)


def decode_composite_podgroup(raw: dict[str, Any]) -> CompositePodGroup:
    """Decode a scheduling.k8s.io/v1alpha3 CompositePodGroup; raises DecodeError naming
    the field."""
    meta = raw.get("metadata") or {}
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    try:
        spec = _obj(raw.get("spec"), "spec")
        ref = _obj(spec.get("workloadRef"), "spec.workloadRef")
        return CompositePodGroup(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            generation=int(meta.get("generation") or 0),
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
            parent=_optional_name(
                spec.get("parentCompositePodGroupName"), "spec.parentCompositePodGroupName"
            )
            or "",
            min_group_count=_policy(
                spec.get("schedulingPolicy"), "spec.schedulingPolicy", "minGroupCount"
            ),
            topology_key=_topology(spec.get("schedulingConstraints"), "spec.schedulingConstraints"),
            disruption_mode=_disruption(spec.get("disruptionMode"), "spec.disruptionMode"),
            priority=_priority(spec),
            workload_name=str(ref.get("workloadName") or ""),
            template_name=str(ref.get("templateName") or ""),
            conditions=_conditions(raw.get("status")),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        raise _fail(KIND, key, exc) from None
