"""Builders for pods, nodes and PodGroups in tests (kube-scheduler's testing/wrappers.go).

Builders produce raw API dicts (`.raw()`) - what a test sends to a real API server - and
decoded objects (`.obj()`) through the same decoders the informers use, so unit tests
exercise the real decoding path. They ship in the wheel (asched.testing) so out-of-tree
plugins test with the builders asched's own suite uses.

    make_pod("p").cpu("500m").memory("1Gi").node_selector({"node-type": "gpu"}).obj()
    make_node("n1").capacity(cpu="4", memory="32Gi").label("zone", "a").obj()
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, Self

from asched.api import Node, Pod, decode_node, decode_pod
from asched.api.composite import CompositePodGroup, decode_composite_podgroup
from asched.api.podgroup import POD_GROUP_LABEL, PodGroup, decode_podgroup
from asched.api.workload import NativePodGroup, decode_native_podgroup

_uid = itertools.count(1)


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{name}-{next(_uid)}",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {},
            },
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
            "status": {"phase": "Pending"},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._raw["spec"]
        return spec

    @property
    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self._raw["metadata"]
        return meta

    def _requests(self, container: int = 0) -> dict[str, Any]:
        c = self._spec["containers"][container]
        reqs: dict[str, Any] = c.setdefault("resources", {}).setdefault("requests", {})
        return reqs

    def uid(self, uid: str) -> Self:
        self._meta["uid"] = uid
        return self

    def created(self, ts: str) -> Self:
        self._meta["creationTimestamp"] = ts
        return self

    def label(self, key: str, value: str) -> Self:
        self._meta["labels"][key] = value
        return self

    def labels(self, labels: dict[str, str]) -> Self:
        self._meta["labels"].update(labels)
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def owner(self, kind: str, name: str, uid: str = "", controller: bool = True) -> Self:
        self._meta.setdefault("ownerReferences", []).append(
            {
                "apiVersion": "v1",
                "kind": kind,
                "name": name,
                "uid": uid or f"uid-{name}",
                "controller": controller,
            }
        )
        return self

    def scheduler(self, name: str) -> Self:
        self._spec["schedulerName"] = name
        return self

    def node(self, name: str) -> Self:
        self._spec["nodeName"] = name
        return self

    def priority(self, value: int) -> Self:
        self._spec["priority"] = value
        return self

    def scheduling_group(self, pod_group: str) -> Self:
        """Join the native (scheduling.k8s.io/v1beta1) PodGroup *pod_group*."""
        self._spec["schedulingGroup"] = {"podGroupName": pod_group}
        return self

    def preemption_policy(self, policy: str) -> Self:
        self._spec["preemptionPolicy"] = policy
        return self

    def cpu(self, q: str, container: int = 0) -> Self:
        self._requests(container)["cpu"] = q
        return self

    def memory(self, q: str, container: int = 0) -> Self:
        self._requests(container)["memory"] = q
        return self

    def request(self, name: str, q: str, container: int = 0) -> Self:
        self._requests(container)[name] = q
        return self

    def container(
        self,
        name: str,
        image: str = "registry.k8s.io/pause:3.10",
        requests: dict[str, str] | None = None,
    ) -> Self:
        c: dict[str, Any] = {"name": name, "image": image}
        if requests:
            c["resources"] = {"requests": dict(requests)}
        self._spec["containers"].append(c)
        return self

    def init_container(
        self, name: str, requests: dict[str, str] | None = None, sidecar: bool = False
    ) -> Self:
        c: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10"}
        if requests:
            c["resources"] = {"requests": dict(requests)}
        if sidecar:
            c["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(c)
        return self

    def image(self, image: str, container: int = 0) -> Self:
        self._spec["containers"][container]["image"] = image
        return self

    def host_port(
        self, port: int, protocol: str = "TCP", host_ip: str = "", container: int = 0
    ) -> Self:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        self._spec["containers"][container].setdefault("ports", []).append(p)
        return self

    def overhead(self, resources: dict[str, str]) -> Self:
        self._spec["overhead"] = dict(resources)
        return self

    def node_selector(self, selector: dict[str, str]) -> Self:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def affinity(self, affinity: dict[str, Any]) -> Self:
        self._spec["affinity"] = copy.deepcopy(affinity)
        return self

    def node_affinity_in(self, key: str, values: list[str]) -> Self:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
        na = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        req = na.setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        req["nodeSelectorTerms"].append(term)
        return self

    def toleration(
        self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal"
    ) -> Self:
        t = {"key": key, "operator": operator, "value": value, "effect": effect}
        self._spec.setdefault("tolerations", []).append({k: v for k, v in t.items() if v})
        return self

    def spread(
        self,
        max_skew: int,
        topology_key: str,
        labels: dict[str, str],
        when: str = "DoNotSchedule",
        **extra: Any,
    ) -> Self:
        c: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": dict(labels)},
        }
        c.update(extra)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def gate(self, name: str) -> Self:
        self._spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def pvc(self, claim: str, volume: str = "") -> Self:
        self._spec.setdefault("volumes", []).append(
            {"name": volume or claim, "persistentVolumeClaim": {"claimName": claim}}
        )
        return self

    def resource_claim(
        self, name: str, *, claim: str | None = None, template: str | None = None
    ) -> Self:
        """spec.resourceClaims[]: a claim by name, or one made from a template."""
        self._spec.setdefault("resourceClaims", []).append(_claim_entry(name, claim, template))
        return self

    def claim_status(self, name: str, claim: str | None) -> Self:
        """status.resourceClaimStatuses[]: the claim generated for a template claim."""
        entry: dict[str, Any] = {"name": name}
        if claim is not None:
            entry["resourceClaimName"] = claim
        self._raw["status"].setdefault("resourceClaimStatuses", []).append(entry)
        return self

    def phase(self, phase: str) -> Self:
        self._raw["status"]["phase"] = phase
        return self

    def terminating(self, ts: str = "2026-01-01T00:05:00Z") -> Self:
        self._meta["deletionTimestamp"] = ts
        return self

    def pod_affinity(
        self,
        topology_key: str,
        match_labels: dict[str, str] | None = None,
        *,
        anti: bool = False,
        weight: int = 0,
        namespaces: list[str] | None = None,
        namespace_selector: dict[str, Any] | None = None,
        match_expressions: list[dict[str, Any]] | None = None,
    ) -> Self:
        """Add a pod (anti-)affinity term: required, or preferred when `weight` is set.

        `match_labels=None` with no `match_expressions` leaves the label selector out
        (which selects nothing); `{}` is the empty selector (which selects everything).
        """
        term: dict[str, Any] = {"topologyKey": topology_key}
        if match_labels is not None or match_expressions is not None:
            sel: dict[str, Any] = {}
            if match_labels:
                sel["matchLabels"] = dict(match_labels)
            if match_expressions:
                sel["matchExpressions"] = copy.deepcopy(match_expressions)
            term["labelSelector"] = sel
        if namespaces is not None:
            term["namespaces"] = list(namespaces)
        if namespace_selector is not None:
            term["namespaceSelector"] = copy.deepcopy(namespace_selector)
        kind = "podAntiAffinity" if anti else "podAffinity"
        section = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if weight:
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        else:
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        return self

    def nominated(self, node: str) -> Self:
        self._raw["status"]["nominatedNodeName"] = node
        return self

    def pod_group(self, name: str) -> Self:
        """Join the PodGroup `name` (scheduler-plugins' pod-group label)."""
        return self.label(POD_GROUP_LABEL, name)

    def raw(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def manifest(self) -> dict[str, Any]:
        """What a user would send to the API server: no uid, timestamps or status."""
        raw = self.raw()
        raw.pop("status", None)
        for k in ("uid", "creationTimestamp"):
            raw["metadata"].pop(k, None)
        return raw

    def obj(self) -> Pod:
        return decode_pod(self.raw())


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "uid": f"uid-{name}-{next(_uid)}",
                "labels": {"kubernetes.io/hostname": name},
            },
            "spec": {},
            "status": {
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    def capacity(self, **resources: str) -> Self:
        """cpu=..., memory=..., pods=...; other names via `resource()`."""
        for k, v in resources.items():
            self._raw["status"]["capacity"][k] = v
            self._raw["status"]["allocatable"][k] = v
        return self

    def resource(self, name: str, quantity: str) -> Self:
        self._raw["status"]["capacity"][name] = quantity
        self._raw["status"]["allocatable"][name] = quantity
        return self

    def label(self, key: str, value: str) -> Self:
        self._raw["metadata"]["labels"][key] = value
        return self

    def labels(self, labels: dict[str, str]) -> Self:
        self._raw["metadata"]["labels"].update(labels)
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._raw["metadata"].setdefault("annotations", {})[key] = value
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        self._raw["spec"].setdefault("taints", []).append(
            {"key": key, "value": value, "effect": effect}
        )
        return self

    def unschedulable(self, value: bool = True) -> Self:
        self._raw["spec"]["unschedulable"] = value
        return self

    def image(self, names: list[str], size_bytes: int) -> Self:
        self._raw["status"].setdefault("images", []).append(
            {"names": names, "sizeBytes": size_bytes}
        )
        return self

    def raw(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def obj(self) -> Node:
        return decode_node(self.raw())


class PodGroupBuilder:
    """A scheduling.x-k8s.io/v1alpha1 PodGroup (scheduler-plugins' Coscheduling API)."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-pg-{name}-{next(_uid)}",
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"minMember": 1},
        }

    def min_member(self, n: int) -> Self:
        self._raw["spec"]["minMember"] = n
        return self

    def min_resources(self, **resources: str) -> Self:
        """cpu=..., memory=...; other names via `min_resource()`."""
        self._raw["spec"].setdefault("minResources", {}).update(resources)
        return self

    def min_resource(self, name: str, quantity: str) -> Self:
        self._raw["spec"].setdefault("minResources", {})[name] = quantity
        return self

    def timeout(self, seconds: int) -> Self:
        self._raw["spec"]["scheduleTimeoutSeconds"] = seconds
        return self

    def created(self, ts: str) -> Self:
        self._raw["metadata"]["creationTimestamp"] = ts
        return self

    def status(self, **fields: Any) -> Self:
        self._raw.setdefault("status", {}).update(fields)
        return self

    def raw(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def manifest(self) -> dict[str, Any]:
        """What a user would send to the API server: no uid, timestamps or status."""
        raw = self.raw()
        raw.pop("status", None)
        for k in ("uid", "creationTimestamp"):
            raw["metadata"].pop(k, None)
        return raw

    def obj(self) -> PodGroup:
        return decode_podgroup(self.raw())


def make_pod_group(name: str, namespace: str = "default") -> PodGroupBuilder:
    return PodGroupBuilder(name, namespace)


def _claim_entry(name: str, claim: str | None, template: str | None) -> dict[str, Any]:
    """A pod's or a PodGroup's spec.resourceClaims entry (the same fields in both)."""
    entry: dict[str, Any] = {"name": name}
    if claim is not None:
        entry["resourceClaimName"] = claim
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    return entry


class NativePodGroupBuilder:
    """A scheduling.k8s.io/v1beta1 PodGroup (Kubernetes 1.37's native gang API)."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-npg-{name}-{next(_uid)}",
                "generation": 1,
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
        }

    def min_count(self, n: int) -> Self:
        self._raw["spec"]["schedulingPolicy"] = {"gang": {"minCount": n}}
        return self

    def basic(self) -> Self:
        self._raw["spec"]["schedulingPolicy"] = {"basic": {}}
        return self

    def topology(self, key: str) -> Self:
        self._raw["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
        return self

    def generation(self, n: int) -> Self:
        self._raw["metadata"]["generation"] = n
        return self

    def parent(self, composite: str) -> Self:
        """spec.parentCompositePodGroupName (gate CompositePodGroup)."""
        self._raw["spec"]["parentCompositePodGroupName"] = composite
        return self

    def resource_claim(
        self, name: str, *, claim: str | None = None, template: str | None = None
    ) -> Self:
        """A spec.resourceClaims entry naming a claim or a template (DRAWorkloadResourceClaims)."""
        self._raw["spec"].setdefault("resourceClaims", []).append(
            _claim_entry(name, claim, template)
        )
        return self

    def claim_status(self, name: str, claim: str | None) -> Self:
        """A status.resourceClaimStatuses entry: the claim generated for a template entry."""
        statuses = self._raw.setdefault("status", {}).setdefault("resourceClaimStatuses", [])
        statuses.append({"name": name} | ({"resourceClaimName": claim} if claim else {}))
        return self

    def condition(self, type_: str, status: str, reason: str, message: str = "") -> Self:
        conds = self._raw.setdefault("status", {}).setdefault("conditions", [])
        conds.append({"type": type_, "status": status, "reason": reason, "message": message})
        return self

    def raw(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def manifest(self) -> dict[str, Any]:
        """What a user would send to the API server: no uid, generation, timestamps or status."""
        raw = self.raw()
        raw.pop("status", None)
        for k in ("uid", "creationTimestamp", "generation"):
            raw["metadata"].pop(k, None)
        return raw

    def obj(self) -> NativePodGroup:
        return decode_native_podgroup(self.raw())


def make_native_pod_group(name: str, namespace: str = "default") -> NativePodGroupBuilder:
    return NativePodGroupBuilder(name, namespace)


class CompositePodGroupBuilder:
    """A scheduling.k8s.io/v1alpha3 CompositePodGroup (gate CompositePodGroup)."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1alpha3",
            "kind": "CompositePodGroup",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-cpg-{name}-{next(_uid)}",
                "generation": 1,
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {
                "workloadRef": {"workloadName": "w", "templateName": name},
                "schedulingPolicy": {"gang": {"minGroupCount": 1}},
            },
        }

    def min_group_count(self, n: int) -> Self:
        self._raw["spec"]["schedulingPolicy"] = {"gang": {"minGroupCount": n}}
        return self

    def basic(self) -> Self:
        self._raw["spec"]["schedulingPolicy"] = {"basic": {}}
        return self

    def parent(self, composite: str) -> Self:
        self._raw["spec"]["parentCompositePodGroupName"] = composite
        return self

    def topology(self, key: str) -> Self:
        self._raw["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
        return self

    def priority(self, value: int) -> Self:
        self._raw["spec"]["priority"] = value
        return self

    def disruption_all(self) -> Self:
        """spec.disruptionMode {all: {}}: preempted only together."""
        self._raw["spec"]["disruptionMode"] = {"all": {}}
        return self

    def raw(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def obj(self) -> CompositePodGroup:
        return decode_composite_podgroup(self.raw())


def make_composite_pod_group(name: str, namespace: str = "default") -> CompositePodGroupBuilder:
    return CompositePodGroupBuilder(name, namespace)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)
