"""PodTopologySpread: args, PreFilter/Filter, AddPod/RemovePod, PreScore/Score, defaults, hints.

Cases follow what kube-scheduler's podtopologyspread tests cover (filtering_test.go,
scoring_test.go, plugin_test.go, common_test.go); expected numbers are worked out by hand
from the formulas in the plugin's docstrings.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from asched.api import Node, Pod
from asched.framework.columns import NodeRows, subset
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import ArgsError
from asched.framework.status import Code, Status
from asched.framework.types import NodeScore
from asched.plugins import podtopologyspread as pts
from asched.plugins.nodememo import MemoCache, NodeMemo
from asched.plugins.podtopologyspread.args import Args
from asched.plugins.podtopologyspread.filtering import (
    ERR_CONSTRAINTS_NOT_MATCH,
    ERR_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_KEY,
    compute_pre_filter_state,
)
from asched.plugins.podtopologyspread.owners import (
    Workload,
    decode_replica_set,
    decode_service,
    default_selector,
)
from asched.plugins.podtopologyspread.plugin import PodTopologySpread
from asched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_KEY,
    compute_pre_score_rows,
    compute_pre_score_state,
    go_round,
)
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes_pods import Churn, FakeStore, StoreHandle, cluster

ZONE = "zone"
STD_ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"app": "web"}
OK = None
BAD = (Code.UNSCHEDULABLE, ERR_CONSTRAINTS_NOT_MATCH)
NO_LABEL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NODE_LABEL_NOT_MATCH)

Outcome = tuple[Code, str] | None


def node(name: str, zone: str | None = None, key: str = ZONE, **labels: str) -> Node:
    b = make_node(name).labels(labels)
    if zone is not None:
        b = b.label(key, zone)
    return b.obj()


def on(name: str, node_name: str, labels: dict[str, str] | None = None, ns: str = "default") -> Pod:
    return make_pod(name, ns).labels(WEB if labels is None else labels).node(node_name).obj()


def many(prefix: str, node_name: str, n: int, **kw: Any) -> list[Pod]:
    return [on(f"{prefix}{i}", node_name, **kw) for i in range(n)]


def outcome(st: Status | None) -> Outcome:
    if st is None:
        return None
    assert st.plugin == pts.NAME
    return st.code, st.message()


def spread_pod(max_skew: int = 1, key: str = ZONE, **extra: Any) -> Pod:
    return make_pod("incoming").labels(WEB).spread(max_skew, key, WEB, **extra).obj()


FOUR_NODES = [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")]
THREE_ZONES = [
    node("a1", "a", pool="x"),
    node("b1", "b", pool="x"),
    make_node("c1").label(ZONE, "c").taint("dedicated", "gpu").obj(),
]


def run_filter(
    pod: Pod, infos: list[NodeInfo], args: Args | None = None, stores: dict[str, Any] | None = None
) -> dict[str, Outcome]:
    pl = PodTopologySpread(args, StoreHandle(infos, stores))
    state = CycleState()
    _, st = pl.pre_filter(state, pod, infos)
    assert st is None
    return {ni.name: outcome(pl.filter(state, pod, ni)) for ni in infos}


# ---- args ---------------------------------------------------------------------------


def test_args_defaults_to_system_defaulting() -> None:
    args = Args.from_dict({}, "args")
    assert args == Args((), "System")
    assert [
        (c.topology_key, c.max_skew, c.when_unsatisfiable) for c in args.effective_defaults()
    ] == [
        (HOST, 3, "ScheduleAnyway"),
        ("topology.kubernetes.io/zone", 5, "ScheduleAnyway"),
    ]


def test_args_list_defaulting_parses_constraints() -> None:
    args = Args.from_dict(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "PodTopologySpreadArgs",
            "defaultingType": "List",
            "defaultConstraints": [
                {
                    "maxSkew": 2,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeTaintsPolicy": "Honor",
                },
            ],
        },
        "args",
    )
    (c,) = args.effective_defaults()
    assert (
        c.max_skew,
        c.topology_key,
        c.when_unsatisfiable,
        c.node_taints_policy,
        c.node_affinity_policy,
    ) == (2, ZONE, "DoNotSchedule", "Honor", "Honor")


def _dc(**over: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        pytest.param({"bogus": 1}, "a.bogus", id="unknown-field"),
        pytest.param({"defaultingType": "Sometimes"}, "a.defaultingType", id="bad-defaulting"),
        pytest.param(
            {"defaultConstraints": [_dc()]}, "a.defaultingType", id="system-with-constraints"
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(maxSkew=0)]},
            "a.defaultConstraints[0].maxSkew",
            id="max-skew-zero",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(maxSkew=True)]},
            "a.defaultConstraints[0].maxSkew",
            id="max-skew-bool",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(topologyKey="")]},
            "a.defaultConstraints[0].topologyKey",
            id="empty-key",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(topologyKey="-bad key")]},
            "a.defaultConstraints[0].topologyKey",
            id="invalid-key",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(whenUnsatisfiable=None)]},
            "a.defaultConstraints[0].whenUnsatisfiable",
            id="when-missing",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(whenUnsatisfiable="Maybe")]},
            "a.defaultConstraints[0].whenUnsatisfiable",
            id="when-unsupported",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [_dc(labelSelector={"matchLabels": WEB})],
            },
            "a.defaultConstraints[0].labelSelector",
            id="selector-forbidden",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(), _dc(maxSkew=2)]},
            "a.defaultConstraints[1]",
            id="duplicate-key-and-action",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_dc(extra=1)]},
            "a.defaultConstraints[0].extra",
            id="unknown-constraint-field",
        ),
    ],
)
def test_args_validation(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(ArgsError) as e:
        Args.from_dict(raw, "a")
    assert e.value.path == path


def test_args_allows_same_key_with_other_action() -> None:
    args = Args.from_dict(
        {
            "defaultingType": "List",
            "defaultConstraints": [_dc(), _dc(whenUnsatisfiable="ScheduleAnyway")],
        },
        "a",
    )
    assert len(args.default_constraints) == 2


def test_spec_shape() -> None:
    assert pts.SPEC.name == "PodTopologySpread" == pts.NAME
    assert pts.SPEC.args_type is Args
    assert {"preFilter", "filter", "preScore", "score"} <= pts.SPEC.extension_points()
    assert isinstance(pts.SPEC.new(None, StoreHandle()), PodTopologySpread)


# ---- PreFilter / Filter -----------------------------------------------------------------

FILTER_CASES = [
    pytest.param(
        spread_pod(),
        FOUR_NODES,
        [],
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="no-existing-pods",
    ),
    pytest.param(
        spread_pod(),
        FOUR_NODES,
        many("x", "a1", 2) + many("y", "a2", 1) + many("z", "b1", 1),
        {"a1": BAD, "a2": BAD, "b1": OK, "b2": OK},
        id="zone-skew-too-big",
    ),
    pytest.param(
        spread_pod(2),
        FOUR_NODES,
        many("x", "a1", 2) + many("z", "b1", 1),
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="zone-skew-within-max",
    ),
    pytest.param(
        spread_pod(1, HOST),
        FOUR_NODES,
        many("x", "a1", 2) + many("y", "a2", 1),
        {"a1": BAD, "a2": BAD, "b1": OK, "b2": OK},
        id="hostname-skew",
    ),
    pytest.param(
        spread_pod(),
        [*FOUR_NODES, node("c1")],
        many("x", "a1", 1) + many("c", "c1", 5),
        {"a1": BAD, "a2": BAD, "b1": OK, "b2": OK, "c1": NO_LABEL},
        id="node-missing-topology-label",
    ),
    pytest.param(
        spread_pod(),
        FOUR_NODES,
        many("x", "a1", 2, ns="other"),
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="other-namespace-not-counted",
    ),
    pytest.param(
        spread_pod(),
        FOUR_NODES,
        [make_pod(f"t{i}").labels(WEB).node("a1").terminating().obj() for i in range(2)],
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="terminating-not-counted",
    ),
    pytest.param(
        make_pod("incoming").spread(1, ZONE, WEB).obj(),
        FOUR_NODES,
        many("x", "a1", 2) + many("z", "b1", 1),
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="incoming-does-not-self-match",
    ),
    pytest.param(
        spread_pod(),
        FOUR_NODES,
        many("x", "a1", 3, labels={"app": "db"}),
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="selector-matches-no-pod",
    ),
    pytest.param(
        spread_pod(minDomains=3),
        FOUR_NODES,
        many("x", "a1", 1) + many("z", "b1", 1),
        {"a1": BAD, "a2": BAD, "b1": BAD, "b2": BAD},
        id="min-domains-unmet",
    ),
    pytest.param(
        spread_pod(minDomains=2),
        FOUR_NODES,
        many("x", "a1", 1) + many("z", "b1", 1),
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="min-domains-met",
    ),
    pytest.param(
        make_pod("incoming").labels(WEB).spread(1, ZONE, WEB).spread(1, HOST, WEB).obj(),
        FOUR_NODES,
        many("x", "a1", 1) + many("z", "b1", 1),
        {"a1": BAD, "a2": OK, "b1": BAD, "b2": OK},
        id="zone-and-hostname",
    ),
    pytest.param(
        make_pod("incoming").labels(WEB).spread(1, ZONE, {}).obj(),
        FOUR_NODES,
        many("x", "a1", 3),
        {"a1": OK, "a2": OK, "b1": OK, "b2": OK},
        id="empty-selector-counts-nothing",
    ),
    pytest.param(
        make_pod("incoming")
        .labels({"app": "web", "rev": "2"})
        .spread(1, ZONE, WEB, matchLabelKeys=["rev"])
        .obj(),
        FOUR_NODES,
        many("x", "a1", 2, labels={"app": "web", "rev": "1"})
        + many("z", "b1", 1, labels={"app": "web", "rev": "2"}),
        {"a1": OK, "a2": OK, "b1": BAD, "b2": BAD},
        id="match-label-keys",
    ),
    pytest.param(
        make_pod("incoming").labels(WEB).spread(1, ZONE, WEB, matchLabelKeys=["rev"]).obj(),
        FOUR_NODES,
        many("x", "a1", 2, labels={"app": "web", "rev": "1"})
        + many("z", "b1", 1, labels={"app": "web", "rev": "2"}),
        {"a1": BAD, "a2": BAD, "b1": OK, "b2": OK},
        id="match-label-keys-not-on-pod",
    ),
    pytest.param(
        make_pod("incoming")
        .labels(WEB)
        .node_affinity_in(ZONE, ["a", "b"])
        .spread(1, ZONE, WEB)
        .obj(),
        THREE_ZONES,
        many("x", "a1", 1) + many("y", "b1", 1),
        {"a1": OK, "b1": OK, "c1": OK},
        id="node-affinity-honor",
    ),
    pytest.param(
        make_pod("incoming")
        .labels(WEB)
        .node_affinity_in(ZONE, ["a", "b"])
        .spread(1, ZONE, WEB, nodeAffinityPolicy="Ignore")
        .obj(),
        THREE_ZONES,
        many("x", "a1", 1) + many("y", "b1", 1),
        {"a1": BAD, "b1": BAD, "c1": OK},
        id="node-affinity-ignore",
    ),
    pytest.param(
        make_pod("incoming").labels(WEB).node_selector({"pool": "x"}).spread(1, ZONE, WEB).obj(),
        THREE_ZONES,
        many("x", "a1", 1) + many("y", "b1", 1),
        {"a1": OK, "b1": OK, "c1": OK},
        id="node-selector-honored",
    ),
    pytest.param(
        spread_pod(),
        THREE_ZONES,
        many("x", "a1", 1) + many("y", "b1", 1),
        {"a1": BAD, "b1": BAD, "c1": OK},
        id="node-taints-ignored-by-default",
    ),
    pytest.param(
        spread_pod(nodeTaintsPolicy="Honor"),
        THREE_ZONES,
        many("x", "a1", 1) + many("y", "b1", 1),
        {"a1": OK, "b1": OK, "c1": OK},
        id="node-taints-honor-untolerated",
    ),
    pytest.param(
        make_pod("incoming")
        .labels(WEB)
        .toleration("dedicated", "gpu", "NoSchedule")
        .spread(1, ZONE, WEB, nodeTaintsPolicy="Honor")
        .obj(),
        THREE_ZONES,
        many("x", "a1", 1) + many("y", "b1", 1),
        {"a1": BAD, "b1": BAD, "c1": OK},
        id="node-taints-honor-tolerated",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), FILTER_CASES)
def test_filter(pod: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Outcome]) -> None:
    assert run_filter(pod, cluster(nodes, existing)) == want


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("p").labels(WEB).obj(), id="no-constraints-no-workloads"),
        pytest.param(
            make_pod("p").labels(WEB).spread(1, ZONE, WEB, when="ScheduleAnyway").obj(),
            id="only-schedule-anyway",
        ),
    ],
)
def test_pre_filter_skips(pod: Pod) -> None:
    infos = cluster(FOUR_NODES)
    state = CycleState()
    _, st = PodTopologySpread(None, StoreHandle(infos)).pre_filter(state, pod, infos)
    assert st is not None
    assert st.code == Code.SKIP
    assert state.get(PRE_FILTER_KEY) is None


def test_filter_without_pre_filter_state_is_an_error() -> None:
    infos = cluster(FOUR_NODES)
    st = PodTopologySpread(None, StoreHandle(infos)).filter(CycleState(), spread_pod(), infos[0])
    assert st is not None
    assert st.code == Code.ERROR


# ---- AddPod / RemovePod ---------------------------------------------------------------

_NODES_ADD = [
    node("a1", "a", pool="x"),
    node("a2", "a", pool="x"),
    node("b1", "b", pool="x"),
    node("c1", pool="x"),
    node("d1", "d"),
]
_EXISTING = [on("e1", "a1"), on("e2", "b1")]


@pytest.mark.parametrize(
    ("op", "changed", "node_name", "want"),
    [
        pytest.param("add", on("n", "a2"), "a2", {"a1": BAD, "b1": OK}, id="add-matching"),
        pytest.param(
            "add", on("n", "a2", ns="other"), "a2", {"a1": OK, "b1": OK}, id="add-other-namespace"
        ),
        pytest.param(
            "add",
            on("n", "a2", labels={"app": "db"}),
            "a2",
            {"a1": OK, "b1": OK},
            id="add-not-matching",
        ),
        pytest.param(
            "add", on("n", "c1"), "c1", {"a1": OK, "b1": OK}, id="add-on-node-without-key"
        ),
        pytest.param(
            "add",
            on("n", "d1"),
            "d1",
            {"a1": OK, "b1": OK},
            id="add-on-node-excluded-by-node-selector",
        ),
        pytest.param("remove", _EXISTING[1], "b1", {"a1": BAD, "b1": OK}, id="remove-matching"),
    ],
)
def test_add_remove_pod(op: str, changed: Pod, node_name: str, want: dict[str, Outcome]) -> None:
    pod = make_pod("incoming").labels(WEB).node_selector({"pool": "x"}).spread(1, ZONE, WEB).obj()
    infos = cluster(_NODES_ADD, _EXISTING)
    by_name = {ni.name: ni for ni in infos}
    pl = PodTopologySpread(None, StoreHandle(infos))
    state = CycleState()
    pl.pre_filter(state, pod, infos)
    before = state.clone()
    fn = pl.add_pod if op == "add" else pl.remove_pod
    assert fn(state, pod, changed, by_name[node_name]) is None
    got = {n: outcome(pl.filter(state, pod, by_name[n])) for n in want}
    assert got == want
    # The clone taken before the dry run is untouched.
    assert {n: outcome(pl.filter(before, pod, by_name[n])) for n in want} == {"a1": OK, "b1": OK}


def test_add_pod_without_state_is_an_error() -> None:
    infos = cluster(FOUR_NODES)
    st = PodTopologySpread(None, StoreHandle(infos)).add_pod(
        CycleState(), spread_pod(), on("x", "a1"), infos[0]
    )
    assert st is not None
    assert st.code == Code.ERROR


def test_minimum_stays_exact_under_dry_run_updates() -> None:
    nodes = [node(f"n{i}", f"z{i % 5}") for i in range(10)]
    infos = cluster(nodes, [on(f"p{i}", f"n{i % 10}") for i in range(23)])
    pod = spread_pod()
    pl = PodTopologySpread(None, StoreHandle(infos))
    state = CycleState()
    pl.pre_filter(state, pod, infos)
    rng = random.Random(7)
    added: list[tuple[Pod, NodeInfo]] = []
    for step in range(400):
        s = state.read(PRE_FILTER_KEY)
        if added and rng.random() < 0.5:
            p, ni = added.pop(rng.randrange(len(added)))
            pl.remove_pod(state, pod, p, ni)
        else:
            ni = infos[rng.randrange(len(infos))]
            p = on(f"d{step}", ni.name)
            added.append((p, ni))
            pl.add_pod(state, pod, p, ni)
        assert s.min_match[0] == min(s.counts[0].values())


# ---- PreScore / Score / NormalizeScore ------------------------------------------------


def run_score(
    pod: Pod, infos: list[NodeInfo], args: Args | None = None, stores: dict[str, Any] | None = None
) -> dict[str, int] | None:
    pl = PodTopologySpread(args, StoreHandle(infos, stores))
    state = CycleState()
    st = pl.pre_score(state, pod, infos)
    if st is not None:
        assert st.code == Code.SKIP
        return None
    scores = [NodeScore(ni.name, pl.score(state, pod, ni)) for ni in infos]
    assert pl.normalize_score(state, pod, scores) is None
    return {s.name: s.score for s in scores}


def soft(max_skew: int = 1, key: str = ZONE) -> Pod:
    return make_pod("incoming").labels(WEB).spread(max_skew, key, WEB, when="ScheduleAnyway").obj()


SVC = [Workload("default", "svc", match_labels=WEB)]

SCORE_CASES = [
    # zone: a=3, b=0, 2 domains -> weight log(4): a1=a2=round(4.16)=4, b1=0.
    pytest.param(
        soft(),
        [node("a1", "a"), node("a2", "a"), node("b1", "b")],
        many("x", "a1", 2) + many("y", "a2", 1),
        None,
        None,
        {"a1": 0, "a2": 0, "b1": 100},
        id="zone-counts",
    ),
    # hostname: 0, 1, 2 pods, 3 feasible nodes -> weight log(5): raw 0, 2, 3.
    pytest.param(
        soft(1, HOST),
        [node("n1", "a"), node("n2", "a"), node("n3", "a")],
        many("x", "n2", 1) + many("y", "n3", 2),
        None,
        None,
        {"n1": 100, "n2": 33, "n3": 0},
        id="hostname-counts-per-node",
    ),
    # maxSkew 3 adds 2 to every raw score: 2, 4, 5 -> 100*(7-s)/5.
    pytest.param(
        soft(3, HOST),
        [node("n1", "a"), node("n2", "a"), node("n3", "a")],
        many("x", "n2", 1) + many("y", "n3", 2),
        None,
        None,
        {"n1": 100, "n2": 60, "n3": 40},
        id="max-skew-waters-down",
    ),
    pytest.param(
        soft(),
        [node("a1", "a"), node("b1", "b"), node("c1")],
        many("x", "a1", 1),
        None,
        None,
        {"a1": 0, "b1": 100, "c1": 0},
        id="node-missing-key-ignored",
    ),
    pytest.param(
        soft(),
        [node("a1", "a"), node("b1", "b")],
        [],
        None,
        None,
        {"a1": 100, "b1": 100},
        id="all-zero",
    ),
    pytest.param(
        soft(),
        [node("a1", "a"), node("b1", "b")],
        many("x", "a1", 2, ns="other"),
        None,
        None,
        {"a1": 100, "b1": 100},
        id="other-namespace-not-counted",
    ),
    # System defaults, selector from a Service; c1 has no zone but still spreads by host:
    # raw a1 = 1*log5+2 + 1*log4+4 = 9, a2 = 2 + 1*log4+4 = 7, n3 = 2.
    pytest.param(
        make_pod("incoming").labels(WEB).obj(),
        [node("a1", "a", STD_ZONE), node("a2", "a", STD_ZONE), node("n3")],
        many("x", "a1", 1),
        None,
        {"services/v1": SVC},
        {"a1": 22, "a2": 44, "n3": 100},
        id="system-defaults-from-service",
    ),
    # The system zone constraint uses topology.kubernetes.io/zone: with other zone labels
    # only hostname spreading applies (raw a1 = round(1*log5+2) = 4, a2 = n3 = 2).
    pytest.param(
        make_pod("incoming").labels(WEB).obj(),
        [node("a1", "a"), node("a2", "a"), node("n3")],
        many("x", "a1", 1),
        None,
        {"services/v1": SVC},
        {"a1": 50, "a2": 100, "n3": 100},
        id="system-defaults-custom-zone-label",
    ),
    # Same, selector from the owning ReplicaSet: raw a1 = 1*log4+2 + 1*log4+4 = 9, b1 = 6.
    pytest.param(
        make_pod("incoming").labels(WEB).owner("ReplicaSet", "rs").obj(),
        [node("a1", "a", STD_ZONE), node("b1", "b", STD_ZONE)],
        many("x", "a1", 1),
        None,
        {
            "replicasets.apps/v1": [
                decode_replica_set(
                    {
                        "metadata": {"namespace": "default", "name": "rs"},
                        "spec": {"selector": {"matchLabels": WEB}},
                    }
                )
            ]
        },
        {"a1": 66, "b1": 100},
        id="system-defaults-from-replicaset",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "args", "stores", "want"), SCORE_CASES)
def test_score(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    *,
    args: Args | None,
    stores: dict[str, Any] | None,
    want: dict[str, int],
) -> None:
    assert run_score(pod, cluster(nodes, existing), args, stores) == want


@pytest.mark.parametrize(("raw", "want"), [(2.5, 3), (3.5, 4), (4.49, 4), (0.0, 0)])
def test_raw_scores_round_half_away_from_zero(raw: float, want: int) -> None:
    assert go_round(raw) == want


@pytest.mark.parametrize(
    ("pod", "stores"),
    [
        pytest.param(spread_pod(), None, id="only-do-not-schedule"),
        pytest.param(make_pod("p").labels(WEB).obj(), None, id="defaults-without-workloads"),
        pytest.param(
            make_pod("p").labels(WEB).obj(),
            {"services/v1": [Workload("default", "s", match_labels={"app": "db"})]},
            id="defaults-service-not-selecting",
        ),
    ],
)
def test_pre_score_skips(pod: Pod, stores: dict[str, Any] | None) -> None:
    infos = cluster(FOUR_NODES)
    state = CycleState()
    st = PodTopologySpread(None, StoreHandle(infos, stores)).pre_score(state, pod, infos)
    assert st is not None
    assert st.code == Code.SKIP
    assert state.get(PRE_SCORE_KEY) is None


def test_pre_score_skips_without_nodes() -> None:
    st = PodTopologySpread(None, StoreHandle([])).pre_score(CycleState(), soft(), [])
    assert st is not None
    assert st.code == Code.SKIP


def test_list_defaults_filter_with_service_selector() -> None:
    args = Args.from_dict({"defaultingType": "List", "defaultConstraints": [_dc()]}, "a")
    pod = make_pod("incoming").labels(WEB).obj()
    infos = cluster([node("a1", "a"), node("b1", "b")], many("x", "a1", 2))
    assert run_filter(pod, infos, args, {"services/v1": SVC}) == {"a1": BAD, "b1": OK}


def test_informers_only_with_default_constraints() -> None:
    resources = [r.resource for r in PodTopologySpread(None, StoreHandle()).informers()]
    assert resources == [
        "services/v1",
        "replicationcontrollers/v1",
        "replicasets.apps/v1",
        "statefulsets.apps/v1",
    ]
    listed_none = Args.from_dict({"defaultingType": "List"}, "a")
    assert PodTopologySpread(listed_none, StoreHandle()).informers() == ()


# ---- default selector -------------------------------------------------------------------


def _reqs(sel: Any) -> set[tuple[str, str, frozenset[str]]]:
    return {(r.key, r.operator, r.values) for r in sel.requirements}


def _ls(raw: dict[str, Any]) -> Workload:
    return decode_replica_set(
        {"metadata": {"namespace": "default", "name": "ctl"}, "spec": {"selector": raw}}
    )


@pytest.mark.parametrize(
    ("pod", "services", "rcs", "rss", "sss", "want"),
    [
        pytest.param(make_pod("p").labels(WEB).obj(), [], [], [], [], set(), id="nothing"),
        pytest.param(
            make_pod("p").labels({"app": "web", "tier": "fe"}).obj(),
            [
                Workload("default", "s1", match_labels=WEB),
                Workload("default", "s2", match_labels={"tier": "fe"}),
            ],
            [],
            [],
            [],
            {("app", "In", frozenset({"web"})), ("tier", "In", frozenset({"fe"}))},
            id="services-merged",
        ),
        pytest.param(
            make_pod("p").labels(WEB).obj(),
            [Workload("other", "s", match_labels=WEB)],
            [],
            [],
            [],
            set(),
            id="service-other-namespace",
        ),
        pytest.param(
            make_pod("p").labels(WEB).obj(),
            [Workload("default", "s", match_labels={"app": "db"})],
            [],
            [],
            [],
            set(),
            id="service-not-selecting",
        ),
        pytest.param(
            make_pod("p").labels(WEB).obj(),
            [Workload("default", "s", match_labels=None)],
            [],
            [],
            [],
            set(),
            id="service-nil-selector",
        ),
        pytest.param(
            make_pod("p")
            .labels({"app": "web", "v": "1"})
            .owner("ReplicationController", "ctl")
            .obj(),
            [Workload("default", "s", match_labels=WEB)],
            [Workload("default", "ctl", match_labels={"v": "1"})],
            [],
            [],
            {("app", "In", frozenset({"web"})), ("v", "In", frozenset({"1"}))},
            id="replication-controller",
        ),
        pytest.param(
            make_pod("p").labels(WEB).owner("ReplicaSet", "ctl").obj(),
            [],
            [],
            [
                _ls(
                    {
                        "matchExpressions": [
                            {"key": "app", "operator": "In", "values": ["web", "api"]}
                        ]
                    }
                )
            ],
            [],
            {("app", "In", frozenset({"web", "api"}))},
            id="replica-set-expressions",
        ),
        pytest.param(
            make_pod("p").labels(WEB).owner("StatefulSet", "ctl").obj(),
            [],
            [],
            [],
            [_ls({"matchLabels": WEB})],
            {("app", "In", frozenset({"web"}))},
            id="stateful-set",
        ),
        pytest.param(
            make_pod("p").labels(WEB).owner("ReplicaSet", "ctl", controller=False).obj(),
            [],
            [],
            [_ls({"matchLabels": WEB})],
            [],
            set(),
            id="owner-not-controller",
        ),
        pytest.param(
            make_pod("p").labels(WEB).owner("StatefulSet", "gone").obj(),
            [],
            [],
            [],
            [_ls({"matchLabels": WEB})],
            set(),
            id="controller-not-found",
        ),
    ],
)
def test_default_selector(
    pod: Pod,
    services: list[Workload],
    *,
    rcs: list[Workload],
    rss: list[Workload],
    sss: list[Workload],
    want: set[tuple[str, str, frozenset[str]]],
) -> None:
    sel = default_selector(pod, FakeStore(services), FakeStore(rcs), FakeStore(rss), FakeStore(sss))
    assert _reqs(sel) == want


def test_decode_service() -> None:
    svc = decode_service({"metadata": {"namespace": "ns", "name": "s"}, "spec": {"selector": WEB}})
    assert svc == Workload("ns", "s", match_labels=WEB)
    assert decode_service({"metadata": {"namespace": "ns", "name": "s"}, "spec": {}}) == Workload(
        "ns", "s"
    )


def test_decode_rejects_bad_selector() -> None:
    from asched.api import DecodeError

    with pytest.raises(DecodeError):
        decode_service({"metadata": {"name": "s"}, "spec": {"selector": {"app": 1}}})
    with pytest.raises(DecodeError):
        decode_replica_set(
            {"metadata": {"name": "r"}, "spec": {"selector": {"matchExpressions": [{"key": "a"}]}}}
        )


# ---- queueing hints ---------------------------------------------------------------------

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _hint(resource: EventResource, pod: Pod, old: object, new: object) -> QueueingHint:
    pl = PodTopologySpread(None, StoreHandle())
    for reg in pl.events_to_register():
        if reg.event.resource == resource:
            assert reg.hint is not None
            return reg.hint(pod, old, new)
    raise AssertionError(f"no event registered for {resource}")


_TARGET = spread_pod()


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, on("x", "a1"), Q, id="assigned-matching-added"),
        pytest.param(None, on("x", "a1", labels={"app": "db"}), SKIP, id="non-matching-added"),
        pytest.param(None, make_pod("x").labels(WEB).obj(), SKIP, id="unassigned-added"),
        pytest.param(None, on("x", "a1", ns="other"), SKIP, id="other-namespace"),
        pytest.param(on("x", "a1"), None, Q, id="matching-deleted"),
        pytest.param(
            on("x", "a1", labels={"app": "db"}), on("x", "a1"), Q, id="label-update-now-matching"
        ),
        pytest.param(
            on("x", "a1", labels={"app": "web", "v": "1"}),
            on("x", "a1", labels={"app": "web", "v": "2"}),
            SKIP,
            id="label-update-unrelated",
        ),
        pytest.param(on("x", "a1"), on("x", "a1"), SKIP, id="no-label-change"),
    ],
)
def test_pod_hint(old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert _hint(EventResource.POD, _TARGET, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node("n", "a"), Q, id="added-with-key"),
        pytest.param(None, node("n"), SKIP, id="added-without-key"),
        pytest.param(node("n", "a"), None, Q, id="deleted-with-key"),
        pytest.param(node("n"), None, SKIP, id="deleted-without-key"),
        pytest.param(node("n", "a"), node("n", "b"), Q, id="key-value-changed"),
        pytest.param(node("n"), node("n", "a"), Q, id="key-added"),
        pytest.param(node("n", "a"), node("n", "a", extra="1"), SKIP, id="unrelated-label"),
        pytest.param(
            node("n", "a"), make_node("n").label(ZONE, "a").taint("t").obj(), Q, id="taint-changed"
        ),
    ],
)
def test_node_hint(old: Node | None, new: Node | None, want: QueueingHint) -> None:
    assert _hint(EventResource.NODE, _TARGET, old, new) == want


@pytest.mark.parametrize(
    ("policy", "want"),
    [pytest.param("Honor", Q, id="taints-honored"), pytest.param("Ignore", SKIP, id="ignored")],
)
def test_own_toleration_hint(policy: str, want: QueueingHint) -> None:
    old = make_pod("me").uid("u1").labels(WEB).spread(1, ZONE, WEB, nodeTaintsPolicy=policy)
    new = (
        make_pod("me")
        .uid("u1")
        .labels(WEB)
        .spread(1, ZONE, WEB, nodeTaintsPolicy=policy)
        .toleration("dedicated", "gpu", "NoSchedule")
    )
    target = old.obj()
    assert _hint(EventResource.UNSCHEDULED_POD, target, old.obj(), new.obj()) == want


def test_registered_events_are_kube_schedulers() -> None:
    # PodTopologySpread.EventsToRegister (v1.37.2).
    events = [
        (r.event.resource, r.event.action)
        for r in PodTopologySpread(None, StoreHandle()).events_to_register()
    ]
    assert events == [
        (EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (
            EventResource.UNSCHEDULED_POD,
            ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL,
        ),
        (
            EventResource.NODE,
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT,
        ),
    ]


@pytest.mark.parametrize(
    ("old_labels", "new_labels", "want"),
    [
        # The pod's own constraint selects app=web: gaining or losing it changes the count.
        pytest.param({"app": "db"}, {"app": "web"}, Q, id="now-matches-own-selector"),
        pytest.param({"app": "web"}, {"app": "db"}, Q, id="no-longer-matches"),
        pytest.param({"app": "web"}, {"app": "web", "v": "2"}, SKIP, id="unrelated-label"),
    ],
)
def test_own_label_hint(
    old_labels: dict[str, str], new_labels: dict[str, str], want: QueueingHint
) -> None:
    # isSchedulableAfterTargetPodChange -> isSchedulableAfterPodLabelChange.
    old = make_pod("me").uid("u1").labels(old_labels).spread(1, ZONE, WEB).obj()
    new = make_pod("me").uid("u1").labels(new_labels).spread(1, ZONE, WEB).obj()
    assert _hint(EventResource.UNSCHEDULED_POD, old, old, new) == want


def test_nominated_pod_counts_like_an_assigned_one() -> None:
    # involvedInTopologySpreading: bound or nominated, in the same namespace.
    nominated = make_pod("x").labels(WEB).nominated("a1").obj()
    assert _hint(EventResource.POD, _TARGET, None, nominated) == Q


# ---- memoized counting --------------------------------------------------------------


def test_node_memo_recomputes_only_changed_nodes() -> None:
    infos = cluster(FOUR_NODES, many("x", "a1", 2))
    memo: NodeMemo[int] = NodeMemo()
    totals: list[int] = [0]

    def apply(old: int | None, new: int | None) -> None:
        totals[0] += (new or 0) - (old or 0)

    def compute(ni: NodeInfo) -> int:
        return len(ni.pods)

    assert memo.refresh(infos, compute, apply) == 4
    assert memo.refresh(infos, compute, apply) == 0
    infos[2].add_pod(on("y", "b1"))
    assert memo.refresh(infos, compute, apply) == 1
    assert totals[0] == 3
    # A node that left the list withdraws its contribution.
    assert memo.refresh(infos[1:], compute, apply) == 1
    assert totals[0] == 1


def test_node_memo_notices_a_new_node_object_with_the_same_generation() -> None:
    ni = NodeInfo(node("a1", "a"))
    memo: NodeMemo[str] = NodeMemo()
    seen: list[str | None] = []
    memo.refresh(
        [ni], lambda n: n.node.labels[ZONE] if n.node else None, lambda old, new: seen.append(new)
    )
    gen = ni.generation
    ni.node = node("a1", "b")
    ni.generation = gen
    memo.refresh(
        [ni], lambda n: n.node.labels[ZONE] if n.node else None, lambda old, new: seen.append(new)
    )
    assert seen == ["a", "b"]


def test_memo_cache_evicts_least_recently_used() -> None:
    cache: MemoCache[list[str]] = MemoCache(size=2)
    a = cache.get_or_create("a", list)
    cache.get_or_create("b", list)
    assert cache.get_or_create("a", list) is a  # "a" is now the most recent
    cache.get_or_create("c", list)
    assert len(cache) == 2
    assert cache.get_or_create("a", list) is a
    assert cache.get_or_create("b", list) is not None  # recreated after eviction


def _churn_node(rng: random.Random, name: str) -> Node:
    b = make_node(name)
    if rng.random() < 0.85:
        b = b.label(ZONE, rng.choice("abc")).label(STD_ZONE, rng.choice("xy"))
    if rng.random() < 0.3:
        b = b.taint("dedicated", "gpu")
    return b.obj()


def _churn_pod(rng: random.Random, name: str, node_name: str) -> Pod:
    b = make_pod(name, rng.choice(["default", "default", "other"]))
    b = b.labels(rng.choice([WEB, WEB, {"app": "db"}])).node(node_name)
    if rng.random() < 0.1:
        b = b.terminating()
    return b.obj()


_CHURN_PODS = [
    spread_pod(),
    spread_pod(2, HOST),
    make_pod("incoming")
    .labels(WEB)
    .node_affinity_in(ZONE, ["a", "b"])
    .toleration("dedicated", "gpu", "NoSchedule")
    .spread(1, ZONE, WEB, nodeTaintsPolicy="Honor")
    .spread(1, HOST, WEB)
    .obj(),
    make_pod("incoming").labels(WEB).spread(1, ZONE, WEB, nodeTaintsPolicy="Honor").obj(),
    # Same constraints, other tolerations: must not share a memo entry with the one above.
    make_pod("incoming")
    .labels(WEB)
    .toleration("dedicated", "gpu", "NoSchedule")
    .spread(1, ZONE, WEB, nodeTaintsPolicy="Honor")
    .obj(),
    make_pod("incoming").labels(WEB).node_selector({ZONE: "a"}).spread(1, ZONE, WEB).obj(),
]


@pytest.mark.parametrize("columnar", [False, True], ids=["node-lists", "snapshot-rows"])
def test_memoized_counts_equal_a_full_recount(columnar: bool) -> None:
    """Memoized counts equal a full recount while the cluster churns, over plain node
    lists and over the snapshot's NodeRows (where the memo finds changed rows from the
    generation column)."""
    rng = random.Random(11)
    churn = Churn(rng, _churn_node, _churn_pod)
    pl = PodTopologySpread(None, StoreHandle())
    memo: MemoCache[Any] = MemoCache()
    for _ in range(150):
        churn.step()
        snap: Sequence[NodeInfo] = churn.columnar().node_infos() if columnar else churn.snapshot()
        for pod in _CHURN_PODS:
            cs = pl.constraints(pod, "DoNotSchedule")
            got = compute_pre_filter_state(cs, pod, snap, memo)
            want = compute_pre_filter_state(cs, pod, snap)
            assert (got.counts, got.min_match, got.domains_at_count) == (
                want.counts,
                want.min_match,
                want.domains_at_count,
            )
            soft_pod = (
                make_pod("soft")
                .labels(WEB)
                .spread(1, ZONE, WEB, when="ScheduleAnyway")
                .spread(1, HOST, WEB, when="ScheduleAnyway")
                .obj()
            )
            keep = [rng.random() < 0.6 for _ in snap]
            feasible: Sequence[NodeInfo] = [ni for ni, k in zip(snap, keep, strict=True) if k]
            if isinstance(snap, NodeRows):
                feasible = subset(snap.columns, np.array(keep, dtype=np.bool_))
            cs = pl.constraints(soft_pod, "ScheduleAnyway")
            for require_all in (True, False):
                got_s = compute_pre_score_state(
                    cs, soft_pod, feasible, snap, require_all_topologies=require_all, memo=memo
                )
                want_s = compute_pre_score_state(
                    cs, soft_pod, feasible, snap, require_all_topologies=require_all
                )
                assert (got_s.counts, got_s.score_map(), got_s.ignored_nodes) == (
                    want_s.counts,
                    want_s.score_map(),
                    want_s.ignored_nodes,
                )
                if isinstance(feasible, NodeRows):
                    zone_only = tuple(c for c in cs if c.topology_key != HOST)
                    rows_s = compute_pre_score_rows(
                        zone_only, soft_pod, feasible, snap, require_all_topologies=require_all
                    )
                    want_z = compute_pre_score_state(
                        zone_only, soft_pod, feasible, snap, require_all_topologies=require_all
                    )
                    assert (rows_s.counts, rows_s.score_map(), rows_s.ignored_nodes) == (
                        want_z.counts,
                        want_z.score_map(),
                        want_z.ignored_nodes,
                    )


def test_state_mutations_do_not_reach_the_memo() -> None:
    infos = cluster(FOUR_NODES, many("x", "a1", 1))
    pl = PodTopologySpread(None, StoreHandle(infos))
    pod = spread_pod()
    state = CycleState()
    pl.pre_filter(state, pod, infos)
    pl.add_pod(state, pod, on("n", "b1"), infos[2])
    fresh = CycleState()
    pl.pre_filter(fresh, pod, infos)
    assert fresh.read(PRE_FILTER_KEY).counts == [{"a": 1, "b": 0}]
