"""What a differential scenario is, and how it is read from the YAML files beside it.

A scenario is a small cluster (nodes), pods already bound to those nodes (`existing`),
namespaced objects the pods refer to (`objects`, e.g. PVCs; `late_objects` are created in
the `then` round), and the pods to schedule.
The harness runs it once through asched and once through kube-scheduler and compares the
outcomes; the `expect_*` fields say what the scenario is about, and are checked against
kube-scheduler (the reference) so a scenario that no longer tests what it claims fails.

The loader is strict: an unknown key is an error naming the scenario, so a typo never
silently turns a scenario into one that tests nothing.

Pod entries are a pod's fields with shortcuts for container 0 (`cpu`, `memory`,
`requests`, `image`, `ports`), `labels`, `priorityClassName`, and `spec` (merged into the
pod's spec). `{{node:<name>}}` anywhere in a pod stands for the real name of the
scenario's node `<name>`. `kube_spec` is merged into the kube-scheduler copy only (the
seed scenario, whose asched profile has arguments kube-scheduler does not know).

Native gang scheduling (Kubernetes 1.37, scheduling.k8s.io/v1beta1): `pod_groups` lists
the scenario's PodGroups (`name`, `minCount`, optional `topologyKey` for
spec.schedulingConstraints.topology[0].key, optional `create_after_pods: true` to create
the group only in the `then` phase, after the scheduler has seen its pods), and a pod's
`group: <name>` sets its spec.schedulingGroup.podGroupName. A group may also say
`priorityClassName` (kube-scheduler wants it equal to its pods' priority) and
`racy_condition: true` (kube-scheduler's final condition depends on a race: not
compared) and `disruptionMode: All|Single` (spec.disruptionMode: how group preemption may
evict its pods); `basic: true` (and no minCount) gives the basic policy instead of a gang,
and `resourceClaims` is the group's spec.resourceClaims (`name` and `resourceClaimName`;
`resourceClaimTemplates` the same with `resourceClaimTemplateName`;
DRAWorkloadResourceClaims: a pod listing the same entry shares the claim through the
group, which the claim is then reserved for). A pod may name a group the scenario does
not declare (a PodGroup that never exists). Such scenarios say
`native_gang: true` (they need kube-scheduler's native gang gates). `expect_waiting` lists
pods that must be pending without any event at the end of the first round, before
`then` (a gang short of minCount); the run does not wait for their events, and
`expect_group` gives the PodGroupInitiallyScheduled status (`True`/`False`/`none`) the
reference must leave on a group. `expect_prompt_retry` lists pods that must be bound less
than PROMPT_RETRY seconds after their last FailedScheduling event (a requeue while
backing off, popped from backoffQ at once by an idle queue). `messages_of` limits the
per-pod message comparison to the pods it names (the rest are compared by placement only):
for a gang whose members kube-scheduler tries in random order, only the member whose own
failure decides the group has a deterministic message.

Storage (workloads.py, claims.py): `workloads` lists apps/v1 StatefulSets whose replicas
(`<name>-<i>`) are pods of the scenario like the `pods`; `provision` names the
scenario's StorageClasses (`{{cluster:x}}` -> x) the fake provisioner serves during each
side's run; `expect_claims` maps a claim to the PV (scenario-local name, or
`provisioned`) the reference must bind it to; `expect_node_set` is the exact set of
nodes the bound pods must use. Claims are compared for scenarios with workloads or
expect_claims.

DRA: `slices` publish ResourceSlices (SliceTemplate: a node's, or a `pool` for all
nodes, by node selector or per device); `expect_allocations` maps a ResourceClaim to the
`nodeSelector` and `reservedFor` consumers (pods, `podgroups/<name>`) the reference must
write, and makes the run compare every claim of the scenario (allocations.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asched.api.storage import WAIT_FOR_FIRST_CONSUMER
from asched.localcluster import NodeSpec, Taint
from asched.localcluster.provisioner import FAKE_PROVISIONER
from tests.builders import make_pod
from tests.differential.claims import PROVISIONED
from tests.differential.workloads import WorkloadError, WorkloadTemplate, parse_workload

SCENARIO_DIR = Path(__file__).parent / "scenarios"

#: The comparisons a documented difference may exempt.
COMPARISONS = frozenset({"scheduled", "node", "message", "group", "volume", "allocation", "timing"})

_SCENARIO_KEYS = frozenset(
    {
        "id",
        "plugins",
        "description",
        "profile",
        "nodes",
        "objects",
        "late_objects",
        "cluster_objects",
        "existing",
        "pods",
        "expect_scheduled",
        "expect_nodes",
        "expect_same_node",
        "expect_spread",
        "known_difference",
        "interchangeable",
        "then",
        "within",
        "pod_groups",
        "native_gang",
        "expect_waiting",
        "expect_group",
        "expect_prompt_retry",
        "messages_of",
        "slices",
        "workloads",
        "provision",
        "expect_claims",
        "expect_node_set",
        "expect_allocations",
    }
)
_NODE_KEYS = frozenset(
    {
        "name",
        "cpu",
        "memory",
        "pods",
        "gpus",
        "labels",
        "taints",
        "images",
        "unschedulable",
        "extra",
        "declared_features",
        "later",
    }
)
_POD_KEYS = frozenset(
    {
        "name",
        "cpu",
        "memory",
        "requests",
        "image",
        "ports",
        "labels",
        "priorityClassName",
        "spec",
        "kube_spec",
        "node",
        "status",
        "group",
    }
)
_GROUP_KEYS = frozenset(
    {
        "name",
        "parent",
        "minCount",
        "topologyKey",
        "priorityClassName",
        "create_after_pods",
        "racy_condition",
        "disruptionMode",
        "basic",
        "resourceClaims",
        "resourceClaimTemplates",
    }
)
_SLICE_KEYS = frozenset(
    {"node", "devices", "driver", "shared_counters", "pool", "all_nodes", "node_selector"}
)
_ALLOCATION_KEYS = frozenset({"nodeSelector", "reservedFor"})
_DIFF_KEYS = frozenset({"doc", "differs", "asched", "kube"})
_ACTION_KEYS = frozenset({"delete", "relabel", "labels", "add_node", "set_min_count", "minCount"})
#: What expect_group may say of a group's PodGroupInitiallyScheduled condition.
GROUP_STATES = frozenset({"True", "False", "none"})
#: Seconds a `then` scenario's pods have to get bound after the actions.
DEFAULT_WITHIN = 5.0


class ScenarioError(ValueError):
    """A scenario file says something the harness cannot run."""


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """A node of a scenario; `spec.name` is local to the scenario."""

    spec: NodeSpec
    #: status.images entries, written after kwok marked the node Ready.
    images: tuple[Mapping[str, Any], ...] = ()
    unschedulable: bool = False
    #: status.declaredFeatures (NodeDeclaredFeatures), written like images.
    declared_features: tuple[str, ...] = ()
    #: Created only by a `then: add_node` action, by each side for its own run.
    later: bool = False

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True, slots=True)
class PodTemplate:
    name: str
    #: A manifest without namespace and schedulerName (the harness sets those per run).
    body: Mapping[str, Any]
    #: Merged into spec for the kube-scheduler copy only.
    kube_spec: Mapping[str, Any] = field(default_factory=dict)
    #: Existing pods: the scenario-local node they are bound to.
    node: str = ""
    #: Existing pods: merged into status once kwok runs the pod (in-place resize).
    status: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gated(self) -> bool:
        return bool(self.body["spec"].get("schedulingGates"))

    @property
    def prebound(self) -> bool:
        """A pod created with spec.nodeName: no scheduler ever sees it."""
        return bool(self.body["spec"].get("nodeName"))


@dataclass(frozen=True, slots=True)
class PodGroupTemplate:
    """A native PodGroup (scheduling.k8s.io/v1beta1) of a scenario, in each side's namespace."""

    name: str
    #: spec.schedulingPolicy.gang.minCount; None: the basic policy.
    min_count: int | None
    #: spec.schedulingConstraints.topology[0].key; empty: no constraint.
    topology_key: str = ""
    #: Created in the `then` phase, once the scheduler has seen (and parked) its pods.
    create_after_pods: bool = False
    #: spec.priorityClassName: kube-scheduler requires every pod's priority to equal the
    #: group's (validatePodGroup), or the whole group fails with SchedulerError.
    priority_class: str = ""
    #: kube-scheduler's final condition races (see docs/differential.md): not compared.
    racy_condition: bool = False
    #: spec.disruptionMode: "All" (its pods are preempted together) or "Single"; empty:
    #: not set (Single).
    disruption_mode: str = ""
    #: spec.resourceClaims: (entry name, resourceClaimName) pairs, then (entry name,
    #: resourceClaimTemplateName) pairs.
    resource_claims: tuple[tuple[str, str], ...] = ()
    resource_claim_templates: tuple[tuple[str, str], ...] = ()
    #: spec.parentCompositePodGroupName (a CompositePodGroup of the scenario's `objects`);
    #: the API then requires a workloadRef, which names workload "w", template "t".
    parent: str = ""

    def manifest(self) -> dict[str, Any]:
        """The PodGroup without namespace (the harness sets it per side)."""
        policy: dict[str, Any] = (
            {"basic": {}} if self.min_count is None else {"gang": {"minCount": self.min_count}}
        )
        spec: dict[str, Any] = {"schedulingPolicy": policy}
        claims = [{"name": n, "resourceClaimName": c} for n, c in self.resource_claims]
        claims += [
            {"name": n, "resourceClaimTemplateName": t} for n, t in self.resource_claim_templates
        ]
        if claims:
            spec["resourceClaims"] = claims
        if self.topology_key:
            spec["schedulingConstraints"] = {"topology": [{"key": self.topology_key}]}
        if self.priority_class:
            spec["priorityClassName"] = self.priority_class
        if self.disruption_mode:
            spec["disruptionMode"] = {self.disruption_mode.lower(): {}}
        if self.parent:
            spec["parentCompositePodGroupName"] = self.parent
            spec["workloadRef"] = {"workloadName": "w", "templateName": "t"}
        return {
            "apiVersion": POD_GROUP_API,
            "kind": "PodGroup",
            "metadata": {"name": self.name},
            "spec": spec,
        }


#: The group version of PodGroup (asched.localcluster.components.NATIVE_GANG_API).
POD_GROUP_API = "scheduling.k8s.io/v1beta1"


@dataclass(frozen=True, slots=True)
class SliceTemplate:
    """A ResourceSlice of a scenario: its devices as the API writes them
    (`attributes: {model: {string: a100}}`, `capacity: {memory: {value: 40Gi}}`).

    It is for one node (`node`, the pool named after the node), or it is a `pool` of
    devices for all nodes (`all_nodes: true`), for the nodes a `node_selector` matches
    (a v1.NodeSelector of one term), or, with neither, of devices that each say where
    they are usable (perDeviceNodeSelection: a device's `nodeName`, `nodeSelector` or
    `allNodes`). `{{node:<name>}}` stands for a node's real name anywhere in the slice.
    Such a slice is visible from every scenario's nodes, so its devices need a driver
    (and a DeviceClass, in the scenario's cluster_objects) no other scenario uses."""

    node: str
    devices: tuple[Mapping[str, Any], ...]
    driver: str = "gpu.example.com"
    #: Partitionable devices: the pool's counter sets (`{set: {counter: quantity}}`),
    #: published as a second slice of the node's pool, as a driver must (a slice has
    #: devices or sharedCounters, never both).
    shared_counters: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: The scenario-local pool name of a slice not for one node.
    pool: str = ""
    all_nodes: bool = False
    node_selector: Mapping[str, Any] | None = None


def _slice(raw: Mapping[str, Any], where: str) -> SliceTemplate:
    _check_keys(raw, _SLICE_KEYS, where)
    node, pool = str(raw.get("node", "")), str(raw.get("pool", ""))
    all_nodes = _flag(raw, "all_nodes", where)
    selector = raw.get("node_selector")
    if bool(node) == bool(pool):
        raise ScenarioError(f"{where}: a slice has `node` or `pool`, not both")
    if node and (all_nodes or selector is not None):
        raise ScenarioError(f"{where}: `all_nodes` and `node_selector` go with `pool`")
    if all_nodes and selector is not None:
        raise ScenarioError(f"{where}: `all_nodes` or `node_selector`, not both")
    if pool and raw.get("shared_counters"):
        raise ScenarioError(f"{where}: `shared_counters` only for a node's slice")
    return SliceTemplate(
        node,
        tuple(raw.get("devices", ())),
        str(raw.get("driver", "gpu.example.com")),
        dict(raw.get("shared_counters", {})),
        pool,
        all_nodes,
        None if selector is None else dict(selector),
    )


@dataclass(frozen=True, slots=True)
class AllocationTemplate:
    """What the reference must write into a DRA claim: `nodeSelector` (None: none, the
    allocation is usable on every node) with `{{node:<name>}}` for a node's name, and
    the pods in `reservedFor`."""

    node_selector: Mapping[str, Any] | None
    reserved_for: frozenset[str]


def _allocation(raw: Mapping[str, Any], where: str) -> AllocationTemplate:
    _check_keys(raw, _ALLOCATION_KEYS, where)
    if "nodeSelector" not in raw or "reservedFor" not in raw:
        raise ScenarioError(f"{where}: needs `nodeSelector` (null for none) and `reservedFor`")
    selector = raw["nodeSelector"]
    return AllocationTemplate(
        None if selector is None else dict(selector),
        frozenset(str(p) for p in raw["reservedFor"]),
    )


@dataclass(frozen=True, slots=True)
class KnownDifference:
    """A documented difference (a row `doc` of docs/differential.md) the test asserts."""

    doc: str
    differs: frozenset[str]
    #: Substrings of asched's and kube-scheduler's FailedScheduling messages.
    asched: str = ""
    kube: str = ""


@dataclass(frozen=True, slots=True)
class Action:
    """A change made once the first round has settled: delete a pod, replace its labels,
    add a `later` node, or set a PodGroup's minCount.

    Shared nodes are never changed (every side sees them). A `later` node is the
    exception that proves it: each side creates it for its own `then` phase and deletes
    it at its cleanup, so no other side ever sees it.
    """

    pod: str = ""
    delete: bool = False
    labels: Mapping[str, str] | None = None
    #: add_node: the scenario-local name of a `later` node.
    node: str = ""
    #: set_min_count: the PodGroup and its new spec.schedulingPolicy.gang.minCount.
    group: str = ""
    min_count: int = 0


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    plugins: tuple[str, ...]
    description: str
    nodes: tuple[NodeTemplate, ...]
    pods: tuple[PodTemplate, ...]
    profile: str = "default"
    existing: tuple[PodTemplate, ...] = ()
    objects: tuple[Mapping[str, Any], ...] = ()
    #: Namespaced objects created in the `then` round, once the scheduler has seen (and
    #: parked) the pods: a CompositePodGroup that appears after its children.
    late_objects: tuple[Mapping[str, Any], ...] = ()
    #: Cluster-scoped manifests (PersistentVolumes, StorageClasses, CSINodes): each side
    #: gets its own copy, named through `{{cluster:x}}` (see layout.Placement).
    cluster_objects: tuple[Mapping[str, Any], ...] = ()
    #: Pods the reference must schedule (all others stay unscheduled); None: no claim.
    expect_scheduled: frozenset[str] | None = None
    #: The pods to schedule are identical and kube-scheduler orders equal-priority pods
    #: arbitrarily (not by name or creation): compare how many are scheduled and the
    #: multiset of failure messages, not which pod got what. expect_scheduled is then a
    #: count (expect_count).
    interchangeable: bool = False
    expect_count: int | None = None
    #: pod -> scenario-local node the reference must choose.
    expect_nodes: Mapping[str, str] = field(default_factory=dict)
    #: Pods that must land on the same (scenario-local) node in both runs.
    expect_same_node: tuple[str, ...] = ()
    #: Node label whose per-domain pod counts (sorted) must agree between the runs.
    expect_spread: str = ""
    known_difference: KnownDifference | None = None
    #: Actions after the first settle; the pods then have `within` seconds to be bound
    #: (time-dependent cases: a requeue after a delete or a relabel).
    then: tuple[Action, ...] = ()
    within: float = DEFAULT_WITHIN
    pod_groups: tuple[PodGroupTemplate, ...] = ()
    #: Uses Kubernetes 1.37's native gang scheduling.
    native_gang: bool = False
    #: Pods the reference must leave pending without any event.
    expect_waiting: frozenset[str] = frozenset()
    #: group -> the PodGroupInitiallyScheduled status the reference must leave (or "none").
    expect_group: Mapping[str, str] = field(default_factory=dict)
    #: DRA: ResourceSlices published for the scenario's nodes (shared by both sides, like
    #: the nodes); the DeviceClasses are cluster_objects.DEVICE_CLASSES.
    slices: tuple[SliceTemplate, ...] = ()
    #: Pods that fail, are requeued by an event while their backoff still runs, and must
    #: then be bound within PROMPT_RETRY seconds of their last failure: popped from
    #: backoffQ by an idle queue (SchedulerPopFromBackoffQ), not after the backoff.
    expect_prompt_retry: frozenset[str] = frozenset()
    #: If set, only these pods' messages are compared (see the module docstring).
    messages_of: frozenset[str] | None = None
    #: apps/v1 StatefulSets (workloads.py); their replicas are pods of the scenario.
    workloads: tuple[WorkloadTemplate, ...] = ()
    #: Scenario-local StorageClass names (`{{cluster:x}}` -> x) the fake provisioner
    #: serves while each side runs.
    provision: tuple[str, ...] = ()
    #: claim -> the scenario-local PV it must be bound to (claims.PROVISIONED: one the
    #: provisioner made); checked against the reference and compared.
    expect_claims: Mapping[str, str] = field(default_factory=dict)
    #: The scenario-local nodes the bound pods must use, exactly; None: no claim.
    expect_node_set: frozenset[str] | None = None
    #: DRA claim -> what the reference must write into it; the scenario's claims are then
    #: compared between the runs (allocations.py).
    expect_allocations: Mapping[str, AllocationTemplate] = field(default_factory=dict)
    source: str = ""

    @property
    def pod_names(self) -> tuple[str, ...]:
        """Every pod to schedule: the templates' and the workloads' replicas."""
        return tuple(p.name for p in self.pods) + tuple(
            n for w in self.workloads for n in w.replica_names
        )

    @property
    def compares_allocations(self) -> bool:
        """DRA claims are read and compared (allocations.py): expect_allocations."""
        return bool(self.expect_allocations)

    @property
    def compares_claims(self) -> bool:
        """Claims are read and compared (claims.py): workloads or expect_claims."""
        return bool(self.workloads or self.expect_claims)

    @property
    def late_groups(self) -> tuple[PodGroupTemplate, ...]:
        return tuple(g for g in self.pod_groups if g.create_after_pods)

    @property
    def has_then(self) -> bool:
        """Anything happens after the first settle (actions, late PodGroups or objects)."""
        return bool(self.then or self.late_groups or self.late_objects)

    @property
    def first_nodes(self) -> tuple[NodeTemplate, ...]:
        """The nodes that exist from the start (all but the `later` ones)."""
        return tuple(n for n in self.nodes if not n.later)

    def node(self, name: str) -> NodeTemplate:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)


def _check_keys(raw: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = set(raw) - allowed
    if unknown:
        raise ScenarioError(f"{where}: unknown field(s) {sorted(unknown)}")


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge *extra* into *base* in place: mappings merge, anything else replaces."""
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _node(raw: Mapping[str, Any], where: str) -> NodeTemplate:
    _check_keys(raw, _NODE_KEYS, where)
    taints = tuple(
        Taint(t["key"], str(t.get("value", "")), t.get("effect", "NoSchedule"))
        for t in raw.get("taints", ())
    )
    spec = NodeSpec(
        name=raw["name"],
        cpu=str(raw.get("cpu", "4")),
        memory=str(raw.get("memory", "32Gi")),
        pods=int(raw.get("pods", 110)),
        gpus=int(raw.get("gpus", 0)),
        labels={k: str(v) for k, v in (raw.get("labels") or {}).items()},
        taints=taints,
        extra={k: str(v) for k, v in (raw.get("extra") or {}).items()},
    )
    later = raw.get("later", False)
    if not isinstance(later, bool):
        raise ScenarioError(f"{where}.later: must be true or false")
    if later and (raw.get("images") or raw.get("unschedulable") or raw.get("declared_features")):
        raise ScenarioError(
            f"{where}: a `later` node cannot have images, unschedulable or declared_features"
        )
    return NodeTemplate(
        spec,
        tuple(raw.get("images", ())),
        bool(raw.get("unschedulable")),
        tuple(str(f) for f in raw.get("declared_features", ())),
        later,
    )


def _pod(raw: Mapping[str, Any], where: str, *, existing: bool) -> PodTemplate:
    _check_keys(raw, _POD_KEYS, where)
    if existing != ("node" in raw):
        raise ScenarioError(f"{where}: `node` is required for existing pods and only for them")
    if "status" in raw and not existing:
        raise ScenarioError(f"{where}: `status` is for existing pods only")
    b = make_pod(raw["name"])
    if "cpu" in raw:
        b.cpu(str(raw["cpu"]))
    if "memory" in raw:
        b.memory(str(raw["memory"]))
    for name, quantity in (raw.get("requests") or {}).items():
        b.request(name, str(quantity))
    if "image" in raw:
        b.image(raw["image"])
    b.labels({k: str(v) for k, v in (raw.get("labels") or {}).items()})
    body = b.manifest()
    body["metadata"].pop("namespace", None)
    container = body["spec"]["containers"][0]
    for name, quantity in (raw.get("requests") or {}).items():
        if "/" in name:  # extended resources cannot be overcommitted: limit = request
            container["resources"].setdefault("limits", {})[name] = str(quantity)
    for port in raw.get("ports", ()):
        entry = {"containerPort": port["hostPort"], "protocol": "TCP", **port}
        container.setdefault("ports", []).append(entry)
    if "priorityClassName" in raw:
        body["spec"]["priorityClassName"] = raw["priorityClassName"]
    if "group" in raw:
        # An existing pod may belong to a group too (a victim of group preemption): the
        # groups are created before the existing pods.
        group = raw["group"]
        if not isinstance(group, str) or not group:
            raise ScenarioError(f"{where}.group: must be a PodGroup name")
        body["spec"]["schedulingGroup"] = {"podGroupName": group}
    deep_merge(body["spec"], raw.get("spec") or {})
    return PodTemplate(
        raw["name"],
        body,
        dict(raw.get("kube_spec") or {}),
        raw.get("node", ""),
        dict(raw.get("status") or {}),
    )


def _name(raw: Mapping[str, Any], key: str, where: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise ScenarioError(f"{where}.{key}: must be an object name")
    return value


def _pod_group(raw: Mapping[str, Any], where: str) -> PodGroupTemplate:
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"{where}: must be a mapping with name and minCount")
    _check_keys(raw, _GROUP_KEYS, where)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{where}.name: required, a PodGroup name")
    min_count = raw.get("minCount")
    basic = _flag(raw, "basic", where)
    if basic:
        if min_count is not None:
            raise ScenarioError(f"{where}: basic and minCount exclude each other")
    elif isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ScenarioError(f"{where}.minCount: required, an integer >= 1")
    claims = _entries(raw, "resourceClaims", "resourceClaimName", where)
    templates = _entries(raw, "resourceClaimTemplates", "resourceClaimTemplateName", where)
    key = raw.get("topologyKey", "")
    if not isinstance(key, str):
        raise ScenarioError(f"{where}.topologyKey: must be a node label key")
    priority = raw.get("priorityClassName", "")
    if not isinstance(priority, str):
        raise ScenarioError(f"{where}.priorityClassName: must be a PriorityClass name")
    mode = raw.get("disruptionMode", "")
    if mode not in {"", "All", "Single"}:
        raise ScenarioError(f"{where}.disruptionMode: All or Single")
    return PodGroupTemplate(
        name,
        min_count,
        key,
        _flag(raw, "create_after_pods", where),
        priority,
        _flag(raw, "racy_condition", where),
        mode,
        claims,
        templates,
        _name(raw, "parent", where),
    )


def _entries(
    raw: Mapping[str, Any], key: str, field_name: str, where: str
) -> tuple[tuple[str, str], ...]:
    """A group's claim entries: `name` and `field_name` each."""
    out = []
    for i, c in enumerate(raw.get(key) or ()):
        if not isinstance(c, Mapping) or set(c) != {"name", field_name}:
            raise ScenarioError(f"{where}.{key}[{i}]: name and {field_name}")
        out.append((str(c["name"]), str(c[field_name])))
    return tuple(out)


def _known_difference(raw: Mapping[str, Any], where: str) -> KnownDifference:
    _check_keys(raw, _DIFF_KEYS, where)
    differs = frozenset(raw["differs"])
    if not differs or not differs <= COMPARISONS:
        raise ScenarioError(f"{where}.differs: must be a non-empty subset of {sorted(COMPARISONS)}")
    return KnownDifference(raw["doc"], differs, raw.get("asched", ""), raw.get("kube", ""))


def _action(raw: Mapping[str, Any], where: str) -> Action:
    _check_keys(raw, _ACTION_KEYS, where)
    kinds = [k for k in ("delete", "relabel", "add_node", "set_min_count") if k in raw]
    if len(kinds) != 1:
        raise ScenarioError(
            f"{where}: one of `delete: <pod>`, `relabel: <pod>` (with labels), "
            "`add_node: <later node>` or `set_min_count: <group>` (with minCount)"
        )
    if "minCount" in raw and "set_min_count" not in raw:
        raise ScenarioError(f"{where}: `minCount` goes with `set_min_count`")
    if "add_node" in raw:
        if "labels" in raw:
            raise ScenarioError(f"{where}: `labels` goes with `relabel`")
        return Action(node=str(raw["add_node"]))
    if "set_min_count" in raw:
        if "labels" in raw:
            raise ScenarioError(f"{where}: `labels` goes with `relabel`")
        count = raw.get("minCount")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ScenarioError(f"{where}.minCount: required, an integer >= 1")
        return Action(group=str(raw["set_min_count"]), min_count=count)
    if "delete" in raw:
        if "labels" in raw:
            raise ScenarioError(f"{where}: `labels` goes with `relabel`")
        return Action(str(raw["delete"]), delete=True)
    labels = raw.get("labels")
    if not isinstance(labels, Mapping):
        raise ScenarioError(f"{where}: `relabel` needs `labels` (the pod's new labels)")
    return Action(str(raw["relabel"]), labels={str(k): str(v) for k, v in labels.items()})


def parse_scenario(raw: Mapping[str, Any], source: str = "") -> Scenario:
    where = f"{source}:{raw.get('id', '?')}"
    _check_keys(raw, _SCENARIO_KEYS, where)
    nodes = tuple(_node(n, f"{where}.nodes[{i}]") for i, n in enumerate(raw["nodes"]))
    pods = tuple(
        _pod(p, f"{where}.pods[{i}]", existing=False) for i, p in enumerate(raw.get("pods", ()))
    )
    existing = tuple(
        _pod(p, f"{where}.existing[{i}]", existing=True)
        for i, p in enumerate(raw.get("existing", ()))
    )
    diff = raw.get("known_difference")
    interchangeable = bool(raw.get("interchangeable", False))
    expected = raw.get("expect_scheduled")
    if interchangeable != isinstance(expected, int):
        raise ScenarioError(f"{where}: expect_scheduled is a count exactly when interchangeable")
    scenario = Scenario(
        id=raw["id"],
        plugins=tuple(raw["plugins"]),
        description=raw["description"],
        nodes=nodes,
        pods=pods,
        profile=raw.get("profile", "default"),
        existing=existing,
        objects=tuple(raw.get("objects", ())),
        late_objects=tuple(raw.get("late_objects", ())),
        cluster_objects=tuple(raw.get("cluster_objects", ())),
        expect_scheduled=(
            frozenset(expected) if expected is not None and not interchangeable else None
        ),
        interchangeable=interchangeable,
        expect_count=expected if interchangeable else None,
        expect_nodes=dict(raw.get("expect_nodes") or {}),
        expect_same_node=tuple(raw.get("expect_same_node", ())),
        expect_spread=raw.get("expect_spread", ""),
        known_difference=None if diff is None else _known_difference(diff, f"{where}.known"),
        then=tuple(_action(a, f"{where}.then[{i}]") for i, a in enumerate(raw.get("then", ()))),
        within=float(raw.get("within", DEFAULT_WITHIN)),
        pod_groups=tuple(
            _pod_group(g, f"{where}.pod_groups[{i}]")
            for i, g in enumerate(raw.get("pod_groups", ()))
        ),
        native_gang=_flag(raw, "native_gang", where),
        expect_waiting=frozenset(raw.get("expect_waiting", ())),
        expect_group={str(k): str(v) for k, v in (raw.get("expect_group") or {}).items()},
        slices=tuple(
            _slice(x, f"{where}.slices[{i}]") for i, x in enumerate(raw.get("slices", ()))
        ),
        expect_prompt_retry=frozenset(raw.get("expect_prompt_retry", ())),
        messages_of=frozenset(raw["messages_of"]) if "messages_of" in raw else None,
        workloads=_workloads(raw, where),
        provision=tuple(str(c) for c in raw.get("provision", ())),
        expect_claims={
            str(k): PROVISIONED if v == "provisioned" else str(v)
            for k, v in (raw.get("expect_claims") or {}).items()
        },
        expect_node_set=(
            None if "expect_node_set" not in raw else frozenset(raw["expect_node_set"])
        ),
        expect_allocations={
            str(k): _allocation(v, f"{where}.expect_allocations.{k}")
            for k, v in (raw.get("expect_allocations") or {}).items()
        },
        source=source,
    )
    _validate(scenario, where)
    _validate_storage(scenario, where)
    return scenario


def _workloads(raw: Mapping[str, Any], where: str) -> tuple[WorkloadTemplate, ...]:
    try:
        return tuple(
            parse_workload(w, f"{where}.workloads[{i}]")
            for i, w in enumerate(raw.get("workloads", ()))
        )
    except WorkloadError as err:
        raise ScenarioError(str(err)) from err


def _validate_storage(s: Scenario, where: str) -> None:
    """Workload replicas do not clash with pods; provisioned classes are the fake
    provisioner's WaitForFirstConsumer classes of this scenario."""
    if not s.pod_names:
        raise ScenarioError(f"{where}: no pods and no workloads")
    names = [*(p.name for p in s.existing), *s.pod_names]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{where}: a workload's replica has the name of another pod")
    classes = {
        o["metadata"]["name"]: o for o in s.cluster_objects if o.get("kind") == "StorageClass"
    }
    for name in s.provision:
        cls = classes.get(f"{{{{cluster:{name}}}}}")
        if (
            cls is None
            or cls.get("provisioner") != FAKE_PROVISIONER
            or cls.get("volumeBindingMode") != WAIT_FOR_FIRST_CONSUMER
        ):
            raise ScenarioError(
                f"{where}: provision names {name}, not a StorageClass "
                f"{{{{cluster:{name}}}}} of {FAKE_PROVISIONER} with WaitForFirstConsumer"
            )
    # Which of interchangeable pods holds a claim is not determined, but a claim reserved
    # for a PodGroup alone names none of them.
    reserves_pods = any(
        not r.startswith("podgroups/")
        for a in s.expect_allocations.values()
        for r in a.reserved_for
    )
    if s.interchangeable and (s.compares_claims or reserves_pods):
        raise ScenarioError(f"{where}: claims are not compared for interchangeable pods")
    for claim, allocation in s.expect_allocations.items():
        consumers = set(s.pod_names) | {f"podgroups/{g.name}" for g in s.pod_groups}
        unknown = allocation.reserved_for - consumers
        if unknown:
            raise ScenarioError(
                f"{where}: expect_allocations.{claim} reserves unknown consumers {sorted(unknown)}"
            )
    if s.expect_node_set is not None:
        unknown = s.expect_node_set - {n.name for n in s.nodes}
        if unknown:
            raise ScenarioError(f"{where}: expect_node_set names unknown nodes {sorted(unknown)}")


def _flag(raw: Mapping[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise ScenarioError(f"{where}.{key}: must be true or false")
    return value


def _validate_groups(s: Scenario, where: str) -> None:
    group_names = [g.name for g in s.pod_groups]
    if len(set(group_names)) != len(group_names):
        raise ScenarioError(f"{where}: pod_groups names must be unique")
    joins = any("schedulingGroup" in p.body["spec"] for p in s.pods)
    if (s.pod_groups or joins) and not s.native_gang:
        raise ScenarioError(f"{where}: pod_groups and a pod's `group` need `native_gang: true`")
    racy = {g.name for g in s.pod_groups if g.racy_condition}
    for name, state in s.expect_group.items():
        if name not in group_names:
            raise ScenarioError(f"{where}: expect_group names unknown PodGroup {name}")
        if name in racy:
            raise ScenarioError(f"{where}: expect_group.{name}: its condition is racy_condition")
        if state not in GROUP_STATES:
            raise ScenarioError(
                f"{where}: expect_group.{name}: one of {sorted(GROUP_STATES)}, not {state!r}"
            )
    unknown = s.expect_waiting - {p.name for p in s.pods}
    if unknown:
        raise ScenarioError(f"{where}: expect_waiting names unknown pods {sorted(unknown)}")
    unknown = s.expect_prompt_retry - {p.name for p in s.pods}
    if unknown:
        raise ScenarioError(f"{where}: expect_prompt_retry names unknown pods {sorted(unknown)}")
    unknown = (s.messages_of or frozenset()) - {p.name for p in s.pods}
    if unknown:
        raise ScenarioError(f"{where}: messages_of names unknown pods {sorted(unknown)}")
    if s.expect_scheduled is not None and s.expect_waiting & s.expect_scheduled:
        raise ScenarioError(f"{where}: a pod cannot be both expect_waiting and expect_scheduled")
    for action in s.then:
        if action.node and not any(n.later and n.name == action.node for n in s.nodes):
            raise ScenarioError(f"{where}: `add_node` names {action.node}, not a `later` node")
        if action.group and action.group not in group_names:
            raise ScenarioError(f"{where}: `set_min_count` names unknown PodGroup {action.group}")
    added = [a.node for a in s.then if a.node]
    if len(set(added)) != len(added):
        raise ScenarioError(f"{where}: a `later` node is added once")
    for n in s.nodes:
        if n.later and n.name not in added:
            raise ScenarioError(f"{where}: `later` node {n.name} needs a `then: add_node`")


def _validate(s: Scenario, where: str) -> None:
    node_names = {n.name for n in s.nodes}
    pod_names = [p.name for p in (*s.existing, *s.pods)]
    if len(set(pod_names)) != len(pod_names):
        raise ScenarioError(f"{where}: pod names must be unique")
    if len(node_names) != len(s.nodes):
        raise ScenarioError(f"{where}: node names must be unique")
    for p in s.existing:
        if p.node not in node_names:
            raise ScenarioError(f"{where}: existing pod {p.name} names unknown node {p.node}")
    scheduled = set(s.pod_names)
    for group in (s.expect_scheduled or frozenset(), s.expect_nodes, s.expect_same_node):
        unknown = set(group) - scheduled
        if unknown:
            raise ScenarioError(f"{where}: expectations name unknown pods {sorted(unknown)}")
    for node in s.expect_nodes.values():
        if node not in node_names:
            raise ScenarioError(f"{where}: expect_nodes names unknown node {node}")
    for action in s.then:
        if (action.delete or action.labels is not None) and action.pod not in pod_names:
            raise ScenarioError(f"{where}: `then` names unknown pod {action.pod}")
    for p in s.existing:
        if any(n.later and n.name == p.node for n in s.nodes):
            raise ScenarioError(f"{where}: existing pod {p.name} on `later` node {p.node}")
    _validate_groups(s, where)


def load_scenarios(paths: Iterable[Path] | None = None) -> list[Scenario]:
    """Every scenario of the YAML files (default: scenarios/*.yaml), ids unique."""
    files = sorted(SCENARIO_DIR.glob("*.yaml")) if paths is None else list(paths)
    scenarios: list[Scenario] = []
    for path in files:
        docs: Sequence[Mapping[str, Any]] = yaml.safe_load(path.read_text()) or []
        scenarios += [parse_scenario(raw, path.name) for raw in docs]
    ids = [s.id for s in scenarios]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ScenarioError(f"duplicate scenario ids: {duplicates}")
    return scenarios
