"""What a differential scenario is, and how it is read from the YAML files beside it.

A scenario is a small cluster (nodes), pods already bound to those nodes (`existing`),
namespaced objects the pods refer to (`objects`, e.g. PVCs), and the pods to schedule.
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
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asched.localcluster import NodeSpec, Taint
from tests.builders import make_pod

SCENARIO_DIR = Path(__file__).parent / "scenarios"

#: The comparisons a documented difference may exempt.
COMPARISONS = frozenset({"scheduled", "node", "message"})

_SCENARIO_KEYS = frozenset(
    {
        "id",
        "plugins",
        "description",
        "profile",
        "nodes",
        "objects",
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
    }
)
_DIFF_KEYS = frozenset({"doc", "differs", "asched", "kube"})
_ACTION_KEYS = frozenset({"delete", "relabel", "labels"})
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
class KnownDifference:
    """A documented difference (a row `doc` of docs/differential.md) the test asserts."""

    doc: str
    differs: frozenset[str]
    #: Substrings of asched's and kube-scheduler's FailedScheduling messages.
    asched: str = ""
    kube: str = ""


@dataclass(frozen=True, slots=True)
class Action:
    """A change made once the first round has settled: delete a pod, or replace its labels.

    Only pods are changed, never nodes: the nodes are shared by all sides, pods are not.
    """

    pod: str
    delete: bool = False
    labels: Mapping[str, str] | None = None


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
    source: str = ""

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
    return NodeTemplate(
        spec,
        tuple(raw.get("images", ())),
        bool(raw.get("unschedulable")),
        tuple(str(f) for f in raw.get("declared_features", ())),
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
    deep_merge(body["spec"], raw.get("spec") or {})
    return PodTemplate(
        raw["name"],
        body,
        dict(raw.get("kube_spec") or {}),
        raw.get("node", ""),
        dict(raw.get("status") or {}),
    )


def _known_difference(raw: Mapping[str, Any], where: str) -> KnownDifference:
    _check_keys(raw, _DIFF_KEYS, where)
    differs = frozenset(raw["differs"])
    if not differs or not differs <= COMPARISONS:
        raise ScenarioError(f"{where}.differs: must be a non-empty subset of {sorted(COMPARISONS)}")
    return KnownDifference(raw["doc"], differs, raw.get("asched", ""), raw.get("kube", ""))


def _action(raw: Mapping[str, Any], where: str) -> Action:
    _check_keys(raw, _ACTION_KEYS, where)
    if ("delete" in raw) == ("relabel" in raw):
        raise ScenarioError(f"{where}: one of `delete: <pod>` or `relabel: <pod>` (with labels)")
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
    pods = tuple(_pod(p, f"{where}.pods[{i}]", existing=False) for i, p in enumerate(raw["pods"]))
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
        source=source,
    )
    _validate(scenario, where)
    return scenario


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
    scheduled = {p.name for p in s.pods}
    for group in (s.expect_scheduled or frozenset(), s.expect_nodes, s.expect_same_node):
        unknown = set(group) - scheduled
        if unknown:
            raise ScenarioError(f"{where}: expectations name unknown pods {sorted(unknown)}")
    for node in s.expect_nodes.values():
        if node not in node_names:
            raise ScenarioError(f"{where}: expect_nodes names unknown node {node}")
    for action in s.then:
        if action.pod not in pod_names:
            raise ScenarioError(f"{where}: `then` names unknown pod {action.pod}")


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
