"""The workloads that select a pod, for default spreading (kube-scheduler helper.DefaultSelector).

Default constraints carry no selector: it is deduced per pod from the Services selecting it
and from its controller (ReplicationController, ReplicaSet or StatefulSet). The plugin asks
the scheduler to watch those four resources; each object is decoded into a tiny
`Workload` holding its namespace, name and selector, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from asched.api import DecodeError, Pod
from asched.api.labels import IN, LabelSelector, Requirement, parse_label_selector
from asched.api.meta import str_map
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest, ObjectStore


@dataclass(slots=True, frozen=True)
class Workload:
    namespace: str
    name: str
    # Services and ReplicationControllers select with a plain map; None selects nothing.
    match_labels: Mapping[str, str] | None = None
    # ReplicaSets and StatefulSets select with a LabelSelector.
    selector: LabelSelector | None = None


def _decoder(kind: str, map_selector: bool) -> Callable[[dict[str, Any]], Workload]:
    def decode(raw: dict[str, Any]) -> Workload:
        meta = raw.get("metadata") or {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        spec = raw.get("spec") or {}
        try:
            if map_selector:
                sel = spec.get("selector")
                labels = None if sel is None else str_map(sel, "spec.selector")
                return Workload(ns, name, match_labels=labels)
            selector = parse_label_selector(spec.get("selector"), "spec.selector")
            return Workload(ns, name, selector=selector)
        except (ValueError, TypeError, AttributeError) as exc:
            field, _, detail = str(exc).partition(": ")
            raise DecodeError(kind, f"{ns}/{name}", field, detail or str(exc)) from None

    return decode


SERVICES: InformerRequest[Workload] = InformerRequest(
    "services/v1", "/api/v1/services", _decoder("Service", True), EventResource.SERVICE
)
REPLICATION_CONTROLLERS: InformerRequest[Workload] = InformerRequest(
    "replicationcontrollers/v1",
    "/api/v1/replicationcontrollers",
    _decoder("ReplicationController", True),
    EventResource.REPLICATION_CONTROLLER,
)
REPLICA_SETS: InformerRequest[Workload] = InformerRequest(
    "replicasets.apps/v1",
    "/apis/apps/v1/replicasets",
    _decoder("ReplicaSet", False),
    EventResource.REPLICA_SET,
)
STATEFUL_SETS: InformerRequest[Workload] = InformerRequest(
    "statefulsets.apps/v1",
    "/apis/apps/v1/statefulsets",
    _decoder("StatefulSet", False),
    EventResource.STATEFUL_SET,
)
REQUESTS = (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)

decode_service = SERVICES.decode
decode_replication_controller = REPLICATION_CONTROLLERS.decode
decode_replica_set = REPLICA_SETS.decode
decode_stateful_set = STATEFUL_SETS.decode


def _requirements(label_set: Mapping[str, str]) -> tuple[Requirement, ...]:
    return tuple(Requirement(k, IN, frozenset((v,))) for k, v in sorted(label_set.items()))


def default_selector(
    pod: Pod,
    services: ObjectStore[Workload],
    rcs: ObjectStore[Workload],
    replica_sets: ObjectStore[Workload],
    stateful_sets: ObjectStore[Workload],
) -> LabelSelector:
    """The union of the selectors of the pod's Services and controller; may be empty."""
    label_set: dict[str, str] = {}
    # GetPodServices lists the pod's namespace only (the namespaced lister).
    for svc in services.in_namespace(pod.namespace).values():
        sel = svc.match_labels
        # Services with a nil selector match nothing, not everything.
        if sel is None:
            continue
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            # Everything that selects the pod agrees on these labels: merging is safe.
            label_set.update(sel)
    reqs = _requirements(label_set)
    owner = next((o for o in pod.owner_refs if o.controller), None)
    if owner is None:
        return LabelSelector(reqs)
    key = f"{pod.namespace}/{owner.name}"
    if owner.kind == "ReplicationController":
        rc = rcs.get(key)
        if rc is not None:
            label_set.update(rc.match_labels or {})
            reqs = _requirements(label_set)
    elif owner.kind in ("ReplicaSet", "StatefulSet"):
        store = replica_sets if owner.kind == "ReplicaSet" else stateful_sets
        obj = store.get(key)
        if obj is not None and obj.selector is not None:
            reqs = reqs + obj.selector.requirements
    return LabelSelector(reqs)
