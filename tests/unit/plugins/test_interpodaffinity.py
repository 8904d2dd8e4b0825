"""InterPodAffinity: args, PreFilter/Filter, AddPod/RemovePod, PreScore/Score, hints.

Cases follow what kube-scheduler's interpodaffinity tests cover (filtering_test.go,
scoring_test.go, plugin_test.go): required affinity and anti-affinity, existing pods'
anti-affinity, namespaces and namespaceSelector, the first pod of a group, preferred
terms of both sides and hardPodAffinityWeight.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import ArgsError
from asched.framework.status import Code, Status
from asched.framework.types import NodeScore
from asched.plugins import interpodaffinity as ipa
from asched.plugins.interpodaffinity.args import Args
from asched.plugins.interpodaffinity.counting import count_existing_anti_affinity, sum_scores
from asched.plugins.interpodaffinity.filtering import (
    ERR_AFFINITY,
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
    PRE_FILTER_KEY,
    compute_pre_filter_state,
)
from asched.plugins.interpodaffinity.namespaces import (
    Namespace,
    decode_namespace,
    namespace_labels,
)
from asched.plugins.interpodaffinity.plugin import InterPodAffinity
from asched.plugins.interpodaffinity.readkeys import (
    ReadKeys,
    required_anti_affinity_terms,
    scored_terms,
)
from asched.plugins.interpodaffinity.scoring import PRE_SCORE_KEY
from asched.plugins.interpodaffinity.terms import (
    WeightedTerm,
    required_terms,
    resolve,
    resolve_all,
)
from asched.plugins.nodememo import MemoCache
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.plugins.fakes_pods import Churn, FakeStore, StoreHandle, cluster

ZONE = "zone"
HOST = "kubernetes.io/hostname"
DB = {"app": "db"}
WEB = {"app": "web"}
NS = "namespaces/v1"
OK = None
AFF = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY)
ANTI = (Code.UNSCHEDULABLE, ERR_ANTI_AFFINITY)
EXIST = (Code.UNSCHEDULABLE, ERR_EXISTING_ANTI_AFFINITY)

Outcome = tuple[Code, str] | None


def node(name: str, zone: str | None = None) -> Node:
    b = make_node(name)
    if zone is not None:
        b = b.label(ZONE, zone)
    return b.obj()


NODES = [node("n1", "z1"), node("n2", "z1"), node("n3", "z2"), node("n4")]
THREE = NODES[:3]


def on(name: str, node_name: str, labels: dict[str, str] | None = None, ns: str = "default") -> Pod:
    return make_pod(name, ns).labels(DB if labels is None else labels).node(node_name).obj()


def incoming(labels: dict[str, str] | None = None) -> PodBuilder:
    return make_pod("incoming").labels(WEB if labels is None else labels)


def guard(node_name: str, key: str, ns: str = "default", **term: Any) -> Pod:
    """An existing pod that keeps web pods away (required anti-affinity)."""
    return (
        make_pod("guard", ns)
        .labels({"app": "guard"})
        .node(node_name)
        .pod_affinity(key, WEB, anti=True, **term)
        .obj()
    )


def outcome(st: Status | None) -> Outcome:
    if st is None:
        return None
    assert st.plugin == ipa.NAME
    return st.code, st.message()


def run_filter(
    pod: Pod, infos: list[NodeInfo], namespaces: list[Namespace] | None = None
) -> dict[str, Outcome]:
    pl = InterPodAffinity(None, StoreHandle(infos, {NS: namespaces or []}))
    state = CycleState()
    _, st = pl.pre_filter(state, pod, infos)
    assert st is None
    return {ni.name: outcome(pl.filter(state, pod, ni)) for ni in infos}


# ---- args ---------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert Args.from_dict({}, "a") == Args(1, False)
    assert Args.from_dict(
        {
            "kind": "InterPodAffinityArgs",
            "hardPodAffinityWeight": 100,
            "ignorePreferredTermsOfExistingPods": True,
        },
        "a",
    ) == Args(100, True)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        pytest.param({"hardPodAffinityWeight": -1}, "a.hardPodAffinityWeight", id="negative"),
        pytest.param({"hardPodAffinityWeight": 101}, "a.hardPodAffinityWeight", id="too-big"),
        pytest.param({"hardPodAffinityWeight": "1"}, "a.hardPodAffinityWeight", id="string"),
        pytest.param(
            {"ignorePreferredTermsOfExistingPods": "yes"},
            "a.ignorePreferredTermsOfExistingPods",
            id="not-bool",
        ),
        pytest.param({"weight": 1}, "a.weight", id="unknown-field"),
        pytest.param({"kind": "NodeAffinityArgs"}, "a.kind", id="wrong-kind"),
    ],
)
def test_args_validation(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(ArgsError) as e:
        Args.from_dict(raw, "a")
    assert e.value.path == path


def test_spec_shape() -> None:
    assert ipa.SPEC.name == "InterPodAffinity" == ipa.NAME
    assert ipa.SPEC.args_type is Args
    assert {"preFilter", "filter", "preScore", "score"} <= ipa.SPEC.extension_points()
    pl = ipa.SPEC.new(None, StoreHandle())
    assert isinstance(pl, InterPodAffinity)
    assert [r.resource for r in pl.informers()] == [NS]


def test_decode_namespace() -> None:
    ns = decode_namespace({"metadata": {"name": "team-a", "labels": {"team": "a"}}})
    assert ns == Namespace("team-a", {"team": "a"})


# ---- PreFilter / Filter -----------------------------------------------------------------

OTHER_NS = [Namespace("other", {"team": "x"}), Namespace("default", {"env": "prod"})]

FILTER_CASES = [
    pytest.param(
        incoming().pod_affinity(ZONE, DB).obj(),
        [on("db", "n1")],
        None,
        {"n1": OK, "n2": OK, "n3": AFF, "n4": AFF},
        id="affinity-same-zone",
    ),
    pytest.param(
        incoming().pod_affinity(HOST, DB).obj(),
        [on("db", "n1")],
        None,
        {"n1": OK, "n2": AFF, "n3": AFF, "n4": AFF},
        id="affinity-same-host",
    ),
    pytest.param(
        incoming()
        .pod_affinity(
            ZONE, match_expressions=[{"key": "app", "operator": "In", "values": ["db", "cache"]}]
        )
        .obj(),
        [on("c", "n3", {"app": "cache"})],
        None,
        {"n1": AFF, "n2": AFF, "n3": OK, "n4": AFF},
        id="affinity-expressions",
    ),
    pytest.param(
        incoming(DB).pod_affinity(ZONE, DB).obj(),
        [],
        None,
        {"n1": OK, "n2": OK, "n3": OK, "n4": AFF},
        id="first-pod-matches-own-term",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB).obj(),
        [],
        None,
        {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF},
        id="no-match-no-self-match",
    ),
    pytest.param(
        incoming(DB).pod_affinity(ZONE, DB).obj(),
        [on("db", "n3")],
        None,
        {"n1": AFF, "n2": AFF, "n3": OK, "n4": AFF},
        id="self-match-ignored-once-a-pod-matches",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB).obj(),
        [on("db", "n1", ns="other")],
        None,
        {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF},
        id="own-namespace-by-default",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, namespaces=["other"]).obj(),
        [on("db", "n1", ns="other")],
        None,
        {"n1": OK, "n2": OK, "n3": AFF, "n4": AFF},
        id="term-namespaces",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, namespace_selector={"matchLabels": {"team": "x"}}).obj(),
        [on("db", "n1", ns="other")],
        OTHER_NS,
        {"n1": OK, "n2": OK, "n3": AFF, "n4": AFF},
        id="namespace-selector",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, namespace_selector={"matchLabels": {"team": "y"}}).obj(),
        [on("db", "n1", ns="other")],
        OTHER_NS,
        {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF},
        id="namespace-selector-no-match",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, namespace_selector={}).obj(),
        [on("db", "n3", ns="far")],
        None,
        {"n1": AFF, "n2": AFF, "n3": OK, "n4": AFF},
        id="empty-namespace-selector",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB).pod_affinity(HOST, {"tier": "be"}).obj(),
        [on("db", "n1"), on("be", "n1", {"tier": "be"})],
        None,
        {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF},
        id="all-terms-need-one-pod",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB).pod_affinity(HOST, {"tier": "be"}).obj(),
        [on("db", "n1", {"app": "db", "tier": "be"})],
        None,
        {"n1": OK, "n2": AFF, "n3": AFF, "n4": AFF},
        id="all-terms-same-pod",
    ),
    pytest.param(
        incoming(DB).pod_affinity(ZONE).obj(),
        [on("db", "n1")],
        None,
        {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF},
        id="absent-label-selector-matches-nothing",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, anti=True).obj(),
        [on("db", "n1")],
        None,
        {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
        id="anti-affinity-zone",
    ),
    pytest.param(
        incoming().pod_affinity(HOST, DB, anti=True).obj(),
        [on("db", "n1")],
        None,
        {"n1": ANTI, "n2": OK, "n3": OK, "n4": OK},
        id="anti-affinity-host",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB).pod_affinity(HOST, DB, anti=True).obj(),
        [on("db", "n1")],
        None,
        {"n1": ANTI, "n2": OK, "n3": AFF, "n4": AFF},
        id="affinity-and-anti-affinity",
    ),
    pytest.param(
        incoming().obj(),
        [guard("n1", HOST)],
        None,
        {"n1": EXIST, "n2": OK, "n3": OK, "n4": OK},
        id="existing-anti-host",
    ),
    pytest.param(
        incoming().obj(),
        [guard("n1", ZONE)],
        None,
        {"n1": EXIST, "n2": EXIST, "n3": OK, "n4": OK},
        id="existing-anti-zone",
    ),
    pytest.param(
        incoming().obj(),
        [guard("n1", HOST, ns="other", namespace_selector={"matchLabels": {"env": "prod"}})],
        OTHER_NS,
        {"n1": EXIST, "n2": OK, "n3": OK, "n4": OK},
        id="existing-anti-namespace-selector",
    ),
    pytest.param(
        incoming().obj(),
        [guard("n1", HOST, ns="other", namespaces=["default"])],
        None,
        {"n1": EXIST, "n2": OK, "n3": OK, "n4": OK},
        id="existing-anti-namespaces",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB).obj(),
        [on("db", "n1"), guard("n2", HOST)],
        None,
        {"n1": OK, "n2": EXIST, "n3": AFF, "n4": AFF},
        id="affinity-and-existing-anti",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "namespaces", "want"), FILTER_CASES)
def test_filter(
    pod: Pod, existing: list[Pod], namespaces: list[Namespace] | None, want: dict[str, Outcome]
) -> None:
    assert run_filter(pod, cluster(NODES, existing), namespaces) == want


@pytest.mark.parametrize(
    ("pod", "existing"),
    [
        pytest.param(incoming().obj(), [on("db", "n1")], id="no-affinity-anywhere"),
        pytest.param(
            incoming().obj(), [guard("n1", HOST, ns="other")], id="existing-anti-in-other-namespace"
        ),
        pytest.param(
            incoming({"app": "api"}).obj(), [guard("n1", HOST)], id="existing-anti-not-matching"
        ),
        pytest.param(
            incoming().pod_affinity(ZONE, DB, weight=10).obj(),
            [on("db", "n1")],
            id="only-preferred-terms",
        ),
    ],
)
def test_pre_filter_skips(pod: Pod, existing: list[Pod]) -> None:
    infos = cluster(NODES, existing)
    state = CycleState()
    _, st = InterPodAffinity(None, StoreHandle(infos)).pre_filter(state, pod, infos)
    assert st is not None
    assert st.code == Code.SKIP
    assert state.get(PRE_FILTER_KEY) is None


def test_filter_without_pre_filter_state_is_an_error() -> None:
    infos = cluster(NODES)
    st = InterPodAffinity(None, StoreHandle(infos)).filter(CycleState(), incoming().obj(), infos[0])
    assert st is not None
    assert st.code == Code.ERROR


# ---- AddPod / RemovePod ---------------------------------------------------------------

_DB_N3 = on("db3", "n3")
_GUARD_N2 = guard("n2", HOST)
_ANTI_DB = incoming().pod_affinity(ZONE, DB, anti=True).obj()
_AFF_DB = incoming().pod_affinity(ZONE, DB).obj()


@pytest.mark.parametrize(
    ("pod", "existing", "op", "changed", "want"),
    [
        pytest.param(
            _ANTI_DB,
            [_DB_N3],
            "add",
            on("db1", "n1"),
            {"n1": ANTI, "n2": ANTI, "n3": ANTI},
            id="add-makes-anti-affinity-fail",
        ),
        pytest.param(
            _ANTI_DB,
            [_DB_N3],
            "remove",
            _DB_N3,
            {"n1": OK, "n2": OK, "n3": OK},
            id="remove-lifts-anti-affinity",
        ),
        pytest.param(
            _AFF_DB,
            [_DB_N3],
            "add",
            on("db1", "n1"),
            {"n1": OK, "n2": OK, "n3": OK},
            id="add-satisfies-affinity",
        ),
        pytest.param(
            _AFF_DB,
            [_DB_N3],
            "remove",
            _DB_N3,
            {"n1": AFF, "n2": AFF, "n3": AFF},
            id="remove-breaks-affinity",
        ),
        pytest.param(
            _ANTI_DB,
            [_DB_N3],
            "add",
            guard("n1", HOST),
            {"n1": EXIST, "n2": OK, "n3": ANTI},
            id="add-existing-anti-affinity",
        ),
        pytest.param(
            _ANTI_DB,
            [_DB_N3, _GUARD_N2],
            "remove",
            _GUARD_N2,
            {"n1": OK, "n2": OK, "n3": ANTI},
            id="remove-existing-anti-affinity",
        ),
        pytest.param(
            _ANTI_DB,
            [_DB_N3],
            "add",
            on("web", "n1", WEB),
            {"n1": OK, "n2": OK, "n3": ANTI},
            id="add-unrelated",
        ),
        pytest.param(
            _AFF_DB,
            [_DB_N3],
            "add",
            on("web", "n1", WEB),
            {"n1": AFF, "n2": AFF, "n3": OK},
            id="add-not-matching-affinity",
        ),
    ],
)
def test_add_remove_pod(
    pod: Pod, existing: list[Pod], op: str, changed: Pod, want: dict[str, Outcome]
) -> None:
    infos = cluster(THREE, existing)
    by_name = {ni.name: ni for ni in infos}
    pl = InterPodAffinity(None, StoreHandle(infos))
    state = CycleState()
    _, st = pl.pre_filter(state, pod, infos)
    assert st is None
    before = {n: outcome(pl.filter(state, pod, by_name[n])) for n in want}
    snapshot = state.clone()
    fn = pl.add_pod if op == "add" else pl.remove_pod
    assert fn(state, pod, changed, by_name[changed.node_name]) is None
    assert {n: outcome(pl.filter(state, pod, by_name[n])) for n in want} == want
    # A clone taken before the dry run keeps the old verdicts.
    assert {n: outcome(pl.filter(snapshot, pod, by_name[n])) for n in want} == before


def test_add_then_remove_restores_state() -> None:
    infos = cluster(THREE, [_DB_N3])
    pl = InterPodAffinity(None, StoreHandle(infos))
    state = CycleState()
    pl.pre_filter(state, _AFF_DB, infos)
    s = state.read(PRE_FILTER_KEY)
    before = (dict(s.affinity), dict(s.anti), dict(s.existing_anti))
    extra = on("db1", "n1")
    pl.add_pod(state, _AFF_DB, extra, infos[0])
    pl.remove_pod(state, _AFF_DB, extra, infos[0])
    assert (s.affinity, s.anti, s.existing_anti) == before


# ---- PreScore / Score / NormalizeScore ------------------------------------------------


def run_score(
    pod: Pod,
    infos: list[NodeInfo],
    args: Args | None = None,
    namespaces: list[Namespace] | None = None,
) -> dict[str, int] | None:
    pl = InterPodAffinity(args, StoreHandle(infos, {NS: namespaces or []}))
    state = CycleState()
    st = pl.pre_score(state, pod, infos)
    if st is not None:
        assert st.code == Code.SKIP
        assert state.get(PRE_SCORE_KEY) is None
        return None
    scores = [NodeScore(ni.name, pl.score(state, pod, ni)) for ni in infos]
    assert pl.normalize_score(state, pod, scores) is None
    return {s.name: s.score for s in scores}


def fan(node_name: str, key: str = ZONE, **term: Any) -> Pod:
    """An existing pod with an affinity term towards web pods."""
    return (
        make_pod("fan").labels({"app": "fan"}).node(node_name).pod_affinity(key, WEB, **term).obj()
    )


SCORE_CASES = [
    pytest.param(
        incoming().pod_affinity(ZONE, DB, weight=5).obj(),
        [on("db", "n1")],
        None,
        None,
        {"n1": 100, "n2": 100, "n3": 0},
        id="preferred-affinity",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, weight=5, anti=True).obj(),
        [on("db", "n1")],
        None,
        None,
        {"n1": 0, "n2": 0, "n3": 100},
        id="preferred-anti-affinity",
    ),
    # raw n1 = 8, n2 = 0, n3 = -4: scaled over [-4, 8].
    pytest.param(
        incoming()
        .pod_affinity(HOST, DB, weight=8)
        .pod_affinity(ZONE, {"app": "cache"}, weight=4, anti=True)
        .obj(),
        [on("db", "n1"), on("c", "n3", {"app": "cache"})],
        None,
        None,
        {"n1": 100, "n2": 33, "n3": 0},
        id="affinity-and-anti-affinity",
    ),
    pytest.param(
        incoming().obj(),
        [fan("n3")],
        None,
        None,
        {"n1": 0, "n2": 0, "n3": 100},
        id="existing-required-affinity",
    ),
    pytest.param(
        incoming().obj(),
        [fan("n3")],
        Args(hard_pod_affinity_weight=0),
        None,
        None,
        id="hard-weight-zero",
    ),
    pytest.param(
        incoming().obj(),
        [fan("n1", weight=10)],
        None,
        None,
        {"n1": 100, "n2": 100, "n3": 0},
        id="existing-preferred-affinity",
    ),
    pytest.param(
        incoming().obj(),
        [fan("n1", weight=10, anti=True)],
        None,
        None,
        {"n1": 0, "n2": 0, "n3": 100},
        id="existing-preferred-anti-affinity",
    ),
    pytest.param(
        incoming().obj(),
        [fan("n1", weight=10)],
        Args(ignore_preferred_terms_of_existing_pods=True),
        None,
        None,
        id="ignore-existing-preferred-terms",
    ),
    pytest.param(
        incoming().pod_affinity(HOST, {"app": "none"}, weight=1).obj(),
        [fan("n1", weight=10)],
        Args(ignore_preferred_terms_of_existing_pods=True),
        None,
        {"n1": 100, "n2": 100, "n3": 0},
        id="ignore-flag-with-own-preferred-terms",
    ),
    pytest.param(
        incoming().pod_affinity(ZONE, DB, weight=5).obj(),
        [on("web", "n1", WEB)],
        None,
        None,
        None,
        id="nothing-matches",
    ),
    pytest.param(incoming().obj(), [on("db", "n1")], None, None, None, id="no-terms-anywhere"),
    pytest.param(
        incoming().obj(),
        [make_pod("fan", "other").labels({"app": "fan"}).node("n3").pod_affinity(ZONE, WEB).obj()],
        None,
        None,
        None,
        id="existing-term-in-other-namespace",
    ),
    pytest.param(
        incoming()
        .pod_affinity(ZONE, DB, weight=5, namespace_selector={"matchLabels": {"team": "x"}})
        .obj(),
        [on("db", "n3", ns="other")],
        None,
        OTHER_NS,
        {"n1": 0, "n2": 0, "n3": 100},
        id="preferred-namespace-selector",
    ),
    pytest.param(
        incoming().obj(),
        [
            make_pod("fan", "other")
            .labels({"app": "fan"})
            .node("n3")
            .pod_affinity(ZONE, WEB, weight=7, namespace_selector={"matchLabels": {"env": "prod"}})
            .obj()
        ],
        None,
        OTHER_NS,
        {"n1": 0, "n2": 0, "n3": 100},
        id="existing-term-namespace-selector",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "args", "namespaces", "want"), SCORE_CASES)
def test_score(
    pod: Pod,
    existing: list[Pod],
    args: Args | None,
    namespaces: list[Namespace] | None,
    want: dict[str, int] | None,
) -> None:
    assert run_score(pod, cluster(THREE, existing), args, namespaces) == want


def test_raw_scores_sum_weights_per_topology() -> None:
    pod = incoming().pod_affinity(ZONE, DB, weight=3).pod_affinity(HOST, DB, weight=2).obj()
    infos = cluster(THREE, [on("db1", "n1"), on("db2", "n1"), on("db3", "n3")])
    pl = InterPodAffinity(None, StoreHandle(infos))
    state = CycleState()
    assert pl.pre_score(state, pod, infos) is None
    # zone z1 holds two db pods (3 each), z2 one; host n1 two (2 each), n3 one.
    assert [pl.score(state, pod, ni) for ni in infos] == [6 + 4, 6, 3 + 2]


# ---- queueing hints ---------------------------------------------------------------------

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
_TARGET = incoming().pod_affinity(ZONE, DB).pod_affinity(HOST, {"app": "cache"}, anti=True).obj()


def _hint(resource: EventResource, pod: Pod, old: object, new: object) -> QueueingHint:
    for reg in InterPodAffinity(None, StoreHandle()).events_to_register():
        if reg.event.resource == resource:
            assert reg.hint is not None
            return reg.hint(pod, old, new)
    raise AssertionError(f"no event registered for {resource}")


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, on("db", "n1"), Q, id="matching-pod-added"),
        pytest.param(None, make_pod("db").labels(DB).obj(), SKIP, id="unassigned-pod-added"),
        pytest.param(None, on("w", "n1", WEB), SKIP, id="unrelated-pod-added"),
        pytest.param(on("c", "n1", {"app": "cache"}), None, Q, id="anti-affinity-pod-deleted"),
        pytest.param(on("db", "n1"), None, SKIP, id="affinity-pod-deleted"),
        pytest.param(on("x", "n1", WEB), on("x", "n1", DB), Q, id="update-now-matches-affinity"),
        pytest.param(
            on("x", "n1", {"app": "cache"}),
            on("x", "n1", WEB),
            Q,
            id="update-stops-matching-anti-affinity",
        ),
        pytest.param(
            on("x", "n1", WEB), on("x", "n1", {"app": "api"}), SKIP, id="update-unrelated"
        ),
    ],
)
def test_pod_hint(old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert _hint(EventResource.POD, _TARGET, old, new) == want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(node("n9", "z9"), Q, id="node-with-topology-key"),
        pytest.param(node("n9"), SKIP, id="node-without-topology-key"),
    ],
)
def test_node_hint(new: Node, want: QueueingHint) -> None:
    target = incoming().pod_affinity(ZONE, DB).obj()
    assert _hint(EventResource.NODE, target, None, new) == want


def test_registered_events_are_kube_schedulers() -> None:
    # InterPodAffinity.EventsToRegister (v1.37.2): assigned pods added, relabelled or
    # deleted; the target pod's own label updates; nodes added or relabelled.
    events = [
        (r.event.resource, r.event.action)
        for r in InterPodAffinity(None, StoreHandle()).events_to_register()
    ]
    assert events == [
        (EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]


# Two anti-affinity terms: the any-versus-all cases tell them apart.
_TWO_ANTI = (
    incoming()
    .pod_affinity(HOST, {"app": "cache"}, anti=True)
    .pod_affinity(ZONE, {"tier": "batch"}, anti=True)
    .obj()
)
_REPELLER = (
    make_pod("repeller").labels({"app": "loner"}).node("n1").pod_affinity(ZONE, WEB, anti=True)
)


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        # Deletion: any anti-affinity term matching the deleted pod is enough.
        pytest.param(_TWO_ANTI, on("c", "n1", {"app": "cache"}), None, Q, id="delete-any-anti"),
        # Deletion: the target matches the deleted pod's own required anti-affinity.
        pytest.param(incoming().obj(), _REPELLER.obj(), None, Q, id="delete-reverse-anti"),
        pytest.param(
            incoming({"app": "api"}).obj(), _REPELLER.obj(), None, SKIP, id="delete-reverse-other"
        ),
        # Relabel: stops matching any one of the anti-affinity terms.
        pytest.param(
            _TWO_ANTI,
            on("x", "n1", {"app": "cache"}),
            on("x", "n1", {"app": "web"}),
            Q,
            id="update-stops-matching-one-anti-term",
        ),
        # A pod only nominated (not bound) counts like an assigned one.
        pytest.param(
            _TARGET,
            None,
            make_pod("db").labels(DB).nominated("n1").obj(),
            Q,
            id="nominated-pod-added",
        ),
    ],
)
def test_pod_hint_follows_is_schedulable_after_assigned_pod_change(
    target: Pod, old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    assert _hint(EventResource.POD, target, old, new) == want


def test_target_label_update_queues() -> None:
    assert _hint(EventResource.UNSCHEDULED_POD, _TARGET, _TARGET, _TARGET) == Q
    other = make_pod("other").obj()
    assert _hint(EventResource.UNSCHEDULED_POD, _TARGET, other, other) == SKIP


_AFFINE = incoming().pod_affinity(ZONE, DB).obj()
_ANTI_ZONE = incoming().pod_affinity(ZONE, DB, anti=True).obj()


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        pytest.param(_AFFINE, None, node("n9", "z9"), Q, id="affinity-node-added-with-key"),
        pytest.param(_AFFINE, None, node("n9"), SKIP, id="affinity-node-added-without-key"),
        pytest.param(_AFFINE, node("n9"), node("n9", "z1"), Q, id="affinity-key-gained"),
        pytest.param(_AFFINE, node("n9", "z1"), node("n9", "z2"), Q, id="affinity-domain-moved"),
        pytest.param(_AFFINE, node("n9", "z1"), node("n9", "z1"), SKIP, id="affinity-same-domain"),
        pytest.param(_AFFINE, node("n9", "z1"), node("n9"), SKIP, id="affinity-key-lost"),
        pytest.param(_ANTI_ZONE, None, node("n9"), Q, id="anti-any-node-added"),
        pytest.param(_ANTI_ZONE, node("n9", "z1"), node("n9"), Q, id="anti-key-lost"),
        pytest.param(_ANTI_ZONE, node("n9", "z1"), node("n9", "z2"), Q, id="anti-domain-moved"),
        pytest.param(_ANTI_ZONE, node("n9"), node("n9", "z1"), SKIP, id="anti-key-gained"),
        pytest.param(incoming().obj(), None, node("n9", "z1"), SKIP, id="no-terms"),
    ],
)
def test_node_hint_follows_is_schedulable_after_node_change(
    target: Pod, old: Node | None, new: Node, want: QueueingHint
) -> None:
    assert _hint(EventResource.NODE, target, old, new) == want


# ---- memoized counting --------------------------------------------------------------


def _churn_node(rng: random.Random, name: str) -> Node:
    b = make_node(name)
    if rng.random() < 0.85:
        b = b.label(ZONE, rng.choice(["z1", "z2", "z3"]))
    return b.obj()


# Terms that read the key "tier" without naming a value, or a namespace label by an
# expression: a memo keyed by the labels' projection must still tell pods apart by them.
_TIER_EXPRESSIONS = [
    [{"key": "tier", "operator": "Exists"}],
    [{"key": "tier", "operator": "DoesNotExist"}],
    [{"key": "tier", "operator": "NotIn", "values": ["front"]}],
]
_NS_SELECTORS = [
    {"matchLabels": {"env": "prod"}},
    {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
    {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["x"]}]},
]


def _churn_pod(rng: random.Random, name: str, node_name: str) -> Pod:
    b = make_pod(name, rng.choice(["default", "default", "other"]))
    labels = rng.choice([DB, WEB, {"app": "cache"}])
    if rng.random() < 0.3:
        labels = {**labels, "tier": rng.choice(["front", "back"])}
    b = b.labels(labels).node(node_name)
    roll = rng.random()
    if roll < 0.2:
        b = b.pod_affinity(rng.choice([HOST, ZONE]), rng.choice([WEB, DB]), anti=True)
    elif roll < 0.3:
        b = b.pod_affinity(ZONE, WEB, anti=True, namespace_selector=rng.choice(_NS_SELECTORS))
    elif roll < 0.4:
        # A required anti-affinity term, or a preferred one of either kind, that reads tier.
        b = b.pod_affinity(
            rng.choice([HOST, ZONE]),
            rng.choice([None, WEB]),
            match_expressions=rng.choice(_TIER_EXPRESSIONS),
            anti=rng.random() < 0.7,
            weight=rng.choice([0, 0, 4]),
            namespace_selector=rng.choice([None, {}, *_NS_SELECTORS]),
        )
    elif roll < 0.5:
        b = b.pod_affinity(ZONE, WEB)
    elif roll < 0.6:
        b = b.pod_affinity(ZONE, WEB, weight=rng.randint(1, 9), anti=rng.random() < 0.5)
    return b.obj()


def _relabel(rng: random.Random, pod: Pod, seq: int) -> Pod:
    """The pod with a label of its own (as scheduler_perf's signature label), and at random
    a tier label that some existing pods' terms read."""
    labels = {**pod.labels, "signature": f"sig-{seq}"}
    tier = rng.choice([None, "front", "back"])
    if tier is not None:
        labels["tier"] = tier
    return replace(pod, labels=labels)


_CHURN_INCOMING = [
    incoming().pod_affinity(ZONE, DB).pod_affinity(HOST, {"app": "cache"}, anti=True).obj(),
    incoming().obj(),
    incoming(DB).pod_affinity(ZONE, DB, anti=True).obj(),
    make_pod("incoming", "other")
    .labels(WEB)
    .pod_affinity(ZONE, DB, namespace_selector={"matchLabels": {"team": "x"}})
    .obj(),
    # The same terms as affinity (all must match one pod) and anti-affinity (each counts).
    incoming()
    .pod_affinity(ZONE, DB)
    .pod_affinity(HOST, WEB)
    .pod_affinity(ZONE, DB, anti=True)
    .pod_affinity(HOST, WEB, anti=True)
    .obj(),
]
_SCORING_INCOMING = [
    incoming().pod_affinity(ZONE, DB, weight=3).pod_affinity(HOST, WEB, weight=2, anti=True).obj(),
    incoming().obj(),
]


@pytest.mark.parametrize("columnar", [False, True], ids=["node-lists", "snapshot-rows"])
def test_memoized_counts_equal_a_full_recount(columnar: bool) -> None:
    """Over plain node lists, and over the snapshot's NodeRows and affinity subsets
    (where the memo finds changed rows from the generation column)."""
    rng = random.Random(5)
    churn = Churn(rng, _churn_node, _churn_pod)
    # The default namespace is relabelled now and then: that moves no node generation. A
    # label no term reads ("uid") varies with it.
    stores = [
        FakeStore([Namespace("other", {"team": "x"}), Namespace("default", labels)])
        for labels in ({}, {"env": "prod"}, {"uid": "1"}, {"env": "prod", "uid": "2"})
    ]
    filter_memo: MemoCache[Any] = MemoCache()
    score_memo: MemoCache[Any] = MemoCache()
    # As the plugin holds them: one per node list they are refreshed over.
    anti_keys = ReadKeys(required_anti_affinity_terms)
    score_keys = {all_pods: ReadKeys(scored_terms) for all_pods in (False, True)}
    seq = 0
    for _ in range(150):
        churn.step()
        store = rng.choice(stores)
        snap: Sequence[NodeInfo] = churn.snapshot()
        with_anti: Sequence[NodeInfo] = [ni for ni in snap if ni.pods_with_required_anti_affinity]
        with_affinity: Sequence[NodeInfo] = [ni for ni in snap if ni.pods_with_affinity]
        if columnar:
            rows = churn.columnar()
            snap = rows.node_infos()
            with_anti = rows.have_pods_with_required_anti_affinity()
            with_affinity = rows.have_pods_with_affinity()
            assert [ni.name for ni in with_anti] == [
                ni.name for ni in snap if ni.pods_with_required_anti_affinity
            ]
        for template in _CHURN_INCOMING:
            seq += 1
            pod = _relabel(rng, template, seq)
            a = pod.affinity
            kw: dict[str, Any] = {
                "affinity_terms": resolve_all(
                    required_terms(a.pod_affinity if a else None), pod.namespace, store
                ),
                "anti_affinity_terms": resolve_all(
                    required_terms(a.pod_anti_affinity if a else None), pod.namespace, store
                ),
                "namespace_labels": namespace_labels(store, pod.namespace),
                "nodes_with_anti_affinity_pods": with_anti,
                "all_nodes": snap,
            }
            got = compute_pre_filter_state(pod, memo=filter_memo, read_keys=anti_keys, **kw)
            want = compute_pre_filter_state(pod, **kw)
            assert (got.existing_anti, got.affinity, got.anti) == (
                want.existing_anti,
                want.affinity,
                want.anti,
            )
        for template in _SCORING_INCOMING:
            seq += 1
            pod = _relabel(rng, template, seq)
            a = pod.affinity
            pref = a.pod_affinity.preferred if a and a.pod_affinity else ()
            anti = a.pod_anti_affinity.preferred if a and a.pod_anti_affinity else ()
            all_pods = bool(pref or anti)
            kw = {
                "preferred": tuple(
                    WeightedTerm(w.weight, resolve(w.term, "default", store)) for w in pref
                ),
                "preferred_anti": tuple(
                    WeightedTerm(w.weight, resolve(w.term, "default", store)) for w in anti
                ),
                "ns_labels": namespace_labels(store, pod.namespace),
                "nodes": snap if all_pods else with_affinity,
                "all_pods": all_pods,
                "hard_weight": 1,
            }
            got_scores = sum_scores(pod, memo=score_memo, read_keys=score_keys[all_pods], **kw)
            assert got_scores == sum_scores(pod, **kw)


def test_state_mutations_do_not_reach_the_memo() -> None:
    infos = cluster(THREE, [_DB_N3])
    pl = InterPodAffinity(None, StoreHandle(infos))
    state = CycleState()
    pl.pre_filter(state, _ANTI_DB, infos)
    pl.add_pod(state, _ANTI_DB, on("db1", "n1"), infos[0])
    fresh = CycleState()
    pl.pre_filter(fresh, _ANTI_DB, infos)
    assert fresh.read(PRE_FILTER_KEY).anti == {ZONE: {"z2": 1}}


def test_labels_no_term_reads_hit_the_memo() -> None:
    """Pods that differ only in a label no existing term reads share one memo entry; a
    label a term reads by Exists (present or absent) makes another."""
    guards = [
        make_pod("g1").labels({"app": "guard"}).node("n1").pod_affinity(HOST, WEB, anti=True).obj(),
        make_pod("g2")
        .labels({"app": "guard"})
        .node("n3")
        .pod_affinity(ZONE, None, match_expressions=_TIER_EXPRESSIONS[0], anti=True)
        .obj(),
    ]
    infos = cluster(THREE, guards)
    memo: MemoCache[Any] = MemoCache()
    keys = ReadKeys(required_anti_affinity_terms)
    counts = [
        count_existing_anti_affinity(
            incoming({**WEB, "signature": f"sig-{i}", **tier}).obj(),
            {"uid": str(i)},
            infos,
            memo,
            keys,
        )
        for i, tier in enumerate([{}, {}, {}, {"tier": "front"}, {"tier": "back"}])
    ]
    assert counts[:3] == [{HOST: {"n1": 1}}] * 3
    assert counts[3:] == [{HOST: {"n1": 1}, ZONE: {"z2": 1}}] * 2
    # One entry without tier, one with tier=front, one with tier=back.
    assert len(memo) == 3


@pytest.mark.parametrize(
    ("anti", "weight"),
    [
        pytest.param(True, 0, id="required-anti"),
        pytest.param(False, 0, id="required-affinity"),
        pytest.param(False, 5, id="preferred-affinity"),
        pytest.param(True, 5, id="preferred-anti"),
    ],
)
@pytest.mark.parametrize("expressions", _TIER_EXPRESSIONS, ids=["exists", "not-exists", "notin"])
def test_every_term_kind_reads_its_keys(
    anti: bool, weight: int, expressions: list[dict[str, Any]]
) -> None:
    """One existing term that reads tier only through an expression: pods that differ in
    tier alone must not share a memo entry, whichever kind of term it is."""
    existing = (
        make_pod("e")
        .labels(DB)
        .node("n1")
        .pod_affinity(ZONE, None, match_expressions=expressions, anti=anti, weight=weight)
        .obj()
    )
    infos = cluster(THREE, [existing])
    anti_memo: MemoCache[Any] = MemoCache()
    score_memo: MemoCache[Any] = MemoCache()
    anti_keys, score_keys = ReadKeys(required_anti_affinity_terms), ReadKeys(scored_terms)
    kw: dict[str, Any] = {
        "preferred": (),
        "preferred_anti": (),
        "ns_labels": {},
        "nodes": infos,
        "all_pods": False,
        "hard_weight": 1,
    }
    for i, tier in enumerate([{}, {"tier": "front"}, {}, {"tier": "back"}, {"tier": "front"}]):
        pod = incoming({**WEB, "signature": f"sig-{i}", **tier}).obj()
        got = count_existing_anti_affinity(pod, {}, infos, anti_memo, anti_keys)
        assert got == count_existing_anti_affinity(pod, {}, infos)
        got = sum_scores(pod, memo=score_memo, read_keys=score_keys, **kw)
        assert got == sum_scores(pod, **kw)
