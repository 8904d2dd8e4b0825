"""NodeAffinity: selector and required terms, PreFilter narrowing, addedAffinity, the
seed's labelKey/labelValue, preferred scoring, args validation and queueing hints.

Cases follow kube-scheduler's nodeaffinity/node_affinity_test.go.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import QueueingHint
from asched.framework.registry import ArgsError
from asched.framework.status import Code
from asched.framework.types import NodeScore, PreFilterResult
from asched.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    NodeAffinityArgs,
    NodeAffinityPlugin,
)
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def name_field(*names: str, op: str = "In") -> dict[str, Any]:
    return {"key": "metadata.name", "operator": op, "values": list(names)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {REQ: {"nodeSelectorTerms": list(terms)}}}


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {PREF: [{"weight": w, "preference": t} for w, t in weighted]}}


def plugin(args: dict[str, Any] | None = None) -> NodeAffinityPlugin:
    return NodeAffinityPlugin(NodeAffinityArgs.from_dict(args or {}, "args"), FakeHandle())


def node(name: str = "n1", **labels: str) -> Node:
    return make_node(name).labels(labels).obj()


def filter_status(pod: Pod, n: Node, args: dict[str, Any] | None = None) -> Any:
    p = plugin(args)
    state = CycleState()
    _, st = p.pre_filter(state, pod, [])
    if st is not None and st.code == Code.SKIP:
        return None  # Filter is not run for this pod
    assert st is None
    return p.filter(state, pod, node_info(n))


FILTER_CASES = [
    pytest.param(make_pod("p").obj(), node(), None, id="no-constraints"),
    pytest.param(
        make_pod("p").node_selector({"foo": "bar"}).obj(),
        node(foo="bar"),
        None,
        id="selector-matches",
    ),
    pytest.param(
        make_pod("p").node_selector({"foo": "bar"}).obj(),
        node(foo="baz"),
        ERR_REASON_POD,
        id="selector-value-differs",
    ),
    pytest.param(
        make_pod("p").node_selector({"foo": "bar"}).obj(),
        node(),
        ERR_REASON_POD,
        id="selector-label-missing",
    ),
    pytest.param(
        make_pod("p")
        .affinity(required({"matchExpressions": [expr("foo", "In", "value1", "value2")]}))
        .obj(),
        node(foo="value2"),
        None,
        id="in-matches",
    ),
    pytest.param(
        make_pod("p")
        .affinity(required({"matchExpressions": [expr("foo", "NotIn", "value1")]}))
        .obj(),
        node(foo="value1"),
        ERR_REASON_POD,
        id="not-in-rejects",
    ),
    pytest.param(
        make_pod("p").affinity(required({"matchExpressions": [expr("foo", "Exists")]})).obj(),
        node(foo="x"),
        None,
        id="exists",
    ),
    pytest.param(
        make_pod("p").affinity(required({"matchExpressions": [expr("foo", "DoesNotExist")]})).obj(),
        node(foo="x"),
        ERR_REASON_POD,
        id="does-not-exist-rejects",
    ),
    pytest.param(
        make_pod("p").affinity(required({"matchExpressions": [expr("gpus", "Gt", "3")]})).obj(),
        node(gpus="4"),
        None,
        id="gt",
    ),
    pytest.param(
        make_pod("p").affinity(required({"matchExpressions": [expr("gpus", "Lt", "3")]})).obj(),
        node(gpus="4"),
        ERR_REASON_POD,
        id="lt-rejects",
    ),
    pytest.param(
        make_pod("p").affinity(required()).obj(),
        node(foo="bar"),
        ERR_REASON_POD,
        id="no-terms-matches-nothing",
    ),
    pytest.param(
        make_pod("p").affinity(required({})).obj(),
        node(foo="bar"),
        ERR_REASON_POD,
        id="empty-term-matches-nothing",
    ),
    pytest.param(
        make_pod("p")
        .affinity(
            required(
                {"matchExpressions": [expr("foo", "In", "a")]},
                {"matchExpressions": [expr("bar", "In", "b")]},
            )
        )
        .obj(),
        node(bar="b"),
        None,
        id="terms-are-ored",
    ),
    pytest.param(
        make_pod("p")
        .affinity(required({"matchExpressions": [expr("foo", "In", "a"), expr("bar", "In", "b")]}))
        .obj(),
        node(bar="b"),
        ERR_REASON_POD,
        id="expressions-are-anded",
    ),
    pytest.param(
        make_pod("p")
        .node_selector({"zone": "a"})
        .affinity(required({"matchExpressions": [expr("foo", "Exists")]}))
        .obj(),
        node(foo="x", zone="b"),
        ERR_REASON_POD,
        id="selector-and-affinity-both-apply",
    ),
    pytest.param(
        make_pod("p").affinity(required({"matchFields": [name_field("n1")]})).obj(),
        node("n2"),
        ERR_REASON_POD,
        id="match-fields-other-node",
    ),
    pytest.param(
        make_pod("p").affinity(required({"matchFields": [name_field("n1")]})).obj(),
        node("n1"),
        None,
        id="match-fields-this-node",
    ),
]


@pytest.mark.parametrize(("pod", "n", "reason"), FILTER_CASES)
def test_filter(pod: Pod, n: Node, reason: str | None) -> None:
    st = filter_status(pod, n)
    if reason is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (reason,),
            NAME,
        )


@pytest.mark.parametrize(
    ("affinity", "want_nodes", "want_code"),
    [
        pytest.param(None, None, Code.SKIP, id="nothing-to-do"),
        pytest.param(
            required({"matchExpressions": [expr("foo", "Exists")]}), None, None, id="no-name-fields"
        ),
        pytest.param(required({"matchFields": [name_field("n1")]}), {"n1"}, None, id="one-node"),
        pytest.param(
            required({"matchFields": [name_field("n1")]}, {"matchFields": [name_field("n2")]}),
            {"n1", "n2"},
            None,
            id="terms-union",
        ),
        pytest.param(
            required({"matchFields": [name_field("n1", "n2"), name_field("n2", "n3")]}),
            {"n2"},
            None,
            id="fields-in-a-term-intersect",
        ),
        pytest.param(
            required(
                {"matchFields": [name_field("n1")]}, {"matchExpressions": [expr("foo", "Exists")]}
            ),
            None,
            None,
            id="a-term-without-names-allows-all",
        ),
        pytest.param(
            required({"matchFields": [name_field("n1"), name_field("n2")]}),
            None,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            id="conflicting-names",
        ),
        pytest.param(
            required({"matchFields": [name_field("n1", op="NotIn")]}),
            None,
            None,
            id="not-in-does-not-narrow",
        ),
    ],
)
def test_pre_filter(
    affinity: dict[str, Any] | None, want_nodes: set[str] | None, want_code: Code | None
) -> None:
    b = make_pod("p")
    if affinity is not None:
        b.affinity(affinity)
    result, st = plugin().pre_filter(CycleState(), b.obj(), [])
    assert (st.code if st else None) == want_code
    if want_code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert st is not None
        assert st.reasons == (ERR_REASON_CONFLICT,)
    if want_nodes is None:
        assert result is None
    else:
        assert result == PreFilterResult(frozenset(want_nodes))


ADDED = {
    "addedAffinity": {
        REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "foo")]}]}
    }
}


@pytest.mark.parametrize(
    ("pod", "n", "args", "want"),
    [
        pytest.param(make_pod("p").obj(), node(zone="foo"), ADDED, None, id="added-matches"),
        pytest.param(
            make_pod("p").obj(),
            node(zone="bar"),
            ADDED,
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED),
            id="added-rejects-plain-pod",
        ),
        pytest.param(
            make_pod("p").node_selector({"disk": "ssd"}).obj(),
            node(zone="foo"),
            ADDED,
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD),
            id="added-matches-pod-does-not",
        ),
        pytest.param(
            make_pod("p").obj(),
            node(**{"node-type": "gpu"}),
            {"labelKey": "node-type", "labelValue": "gpu"},
            None,
            id="label-matches",
        ),
        pytest.param(
            make_pod("p").obj(),
            node(**{"node-type": "cpu"}),
            {"labelKey": "node-type", "labelValue": "gpu"},
            (Code.UNSCHEDULABLE, "node(s) didn't have label node-type=gpu"),
            id="label-differs",
        ),
        pytest.param(
            make_pod("p").obj(),
            node(),
            {"labelKey": "node-type", "labelValue": "gpu"},
            (Code.UNSCHEDULABLE, "node(s) didn't have label node-type=gpu"),
            id="label-missing",
        ),
    ],
)
def test_enforced_rules(
    pod: Pod, n: Node, args: dict[str, Any], want: tuple[Code, str] | None
) -> None:
    st = filter_status(pod, n, args)
    if want is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons) == (want[0], (want[1],))


# --- Score -----------------------------------------------------------------------------


def scores(pod: Pod, nodes: list[Node], args: dict[str, Any] | None = None) -> list[int] | None:
    p = plugin(args)
    state = CycleState()
    st = p.pre_score(state, pod, [])
    if st is not None:
        assert st.code == Code.SKIP
        return None
    raw = [NodeScore(n.name, p.score(state, pod, node_info(n))) for n in nodes]
    assert p.normalize_score(state, pod, raw) is None
    return [s.score for s in raw]


PREFERRED_POD = (
    make_pod("p")
    .affinity(
        preferred(
            (2, {"matchExpressions": [expr("zone", "In", "a")]}),
            (5, {"matchExpressions": [expr("disk", "In", "ssd")]}),
            (0, {"matchExpressions": [expr("zone", "In", "a")]}),
        )
    )
    .obj()
)
THREE_NODES = [
    node("n1", zone="a"),
    node("n2", disk="ssd"),
    node("n3", zone="a", disk="ssd"),
    node("n4"),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "args", "want"),
    [
        pytest.param(make_pod("p").obj(), THREE_NODES, None, None, id="nothing-preferred-skips"),
        # Raw 2, 5, 7 (the weight-0 term counts nothing), 0; normalized by 7.
        pytest.param(PREFERRED_POD, THREE_NODES, None, [28, 71, 100, 0], id="pod-preferred"),
        pytest.param(
            make_pod("p").obj(),
            THREE_NODES,
            {
                "addedAffinity": {
                    PREF: [
                        {"weight": 3, "preference": {"matchExpressions": [expr("disk", "Exists")]}}
                    ]
                }
            },
            [0, 100, 100, 0],
            id="added-preferred",
        ),
        # Raw 2, 5+3, 7+3, 0; normalized by 10.
        pytest.param(
            PREFERRED_POD,
            THREE_NODES,
            {
                "addedAffinity": {
                    PREF: [
                        {"weight": 3, "preference": {"matchExpressions": [expr("disk", "Exists")]}}
                    ]
                }
            },
            [20, 80, 100, 0],
            id="pod-and-added-preferred",
        ),
        pytest.param(
            make_pod("p").obj(),
            [node("a", **{"node-type": "gpu"}), node("b")],
            {"labelKey": "node-type", "labelValue": "gpu"},
            [100, 0],
            id="label-scores-100",
        ),
        # Raw 100+2 and 5; normalized by 102.
        pytest.param(
            PREFERRED_POD,
            [node("a", zone="a", **{"node-type": "gpu"}), node("b", disk="ssd")],
            {"labelKey": "node-type", "labelValue": "gpu"},
            [100, 4],
            id="label-adds-to-preferred",
        ),
        pytest.param(PREFERRED_POD, [node("a"), node("b")], None, [0, 0], id="no-node-matches"),
    ],
)
def test_score(
    pod: Pod, nodes: list[Node], args: dict[str, Any] | None, want: list[int] | None
) -> None:
    assert scores(pod, nodes, args) == want


def test_score_without_prescore_matches() -> None:
    p = plugin()
    raw = [p.score(CycleState(), PREFERRED_POD, node_info(n)) for n in THREE_NODES]
    assert raw == [2, 5, 7, 0]


# --- args ------------------------------------------------------------------------------

P = "profiles[0].pluginConfig[0].args"


def test_args_seed_pair() -> None:
    args = NodeAffinityArgs.from_dict({"labelKey": "node-type", "labelValue": "gpu"}, P)
    assert (args.label_key, args.label_value, args.added_affinity) == ("node-type", "gpu", None)


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        pytest.param(
            {"labelKey": "node-type"},
            f"{P}.labelValue",
            "must be set when labelKey",
            id="key-without-value",
        ),
        pytest.param(
            {"labelValue": "gpu"},
            f"{P}.labelKey",
            "must be set when labelValue",
            id="value-without-key",
        ),
        pytest.param(
            {"labelKey": "bad key!", "labelValue": "x"},
            f"{P}.labelKey",
            "name part",
            id="bad-label-key",
        ),
        pytest.param({"kubeConfig": "/x"}, f"{P}.kubeConfig", "unknown field", id="unknown-field"),
        pytest.param(
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Near", "x")]}]}
                }
            },
            f"{P}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator",
            "Near",
            id="bad-operator",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "In")]}]}
                }
            },
            f"{P}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values",
            "must be specified",
            id="in-without-values",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Exists", "x")]}]}
                }
            },
            f"{P}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values",
            "may not be specified",
            id="exists-with-values",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Gt", "x")]}]}
                }
            },
            f"{P}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values[0]",
            "must be an integer",
            id="gt-not-integer",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    REQ: {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.uid", "operator": "In", "values": ["x"]}
                                ]
                            }
                        ]
                    }
                }
            },
            f"{P}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].key",
            "not a valid field selector key",
            id="bad-field-key",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchFields": [name_field("a", "b")]}]}
                }
            },
            f"{P}.addedAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].values",
            "must be only one value",
            id="field-with-two-values",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    PREF: [{"weight": 1, "preference": {"matchExpressions": [expr("foo", "In")]}}]
                }
            },
            f"{P}.addedAffinity.{PREF}[0].preference.matchExpressions[0].values",
            "must be specified",
            id="preferred-in-without-values",
        ),
        pytest.param(
            {"addedAffinity": {"podAffinity": {}}},
            f"{P}.addedAffinity.podAffinity",
            "unknown field",
            id="added-unknown-field",
        ),
    ],
)
def test_args_invalid(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as exc:
        NodeAffinityArgs.from_dict(raw, P)
    assert exc.value.path == path
    assert message in exc.value.message


# --- queueing hints --------------------------------------------------------------------


def hint(args: dict[str, Any] | None = None) -> Any:
    [reg] = plugin(args).events_to_register()
    return reg.hint


AFFINE = make_pod("p").node_selector({"foo": "bar"}).obj()


@pytest.mark.parametrize(
    ("old", "new", "args", "want"),
    [
        pytest.param(None, node(foo="bar"), None, QueueingHint.QUEUE, id="added-matching"),
        pytest.param(None, node(foo="baz"), None, QueueingHint.QUEUE_SKIP, id="added-not-matching"),
        pytest.param(node(), node(foo="bar"), None, QueueingHint.QUEUE, id="label-now-matches"),
        pytest.param(
            node(foo="bar"),
            node(foo="bar", x="y"),
            None,
            QueueingHint.QUEUE_SKIP,
            id="already-matched",
        ),
        pytest.param(
            None,
            node(foo="bar", zone="bar"),
            ADDED,
            QueueingHint.QUEUE_SKIP,
            id="enforced-affinity-not-met",
        ),
        pytest.param(
            node(foo="bar"),
            node(foo="bar", **{"node-type": "gpu"}),
            {"labelKey": "node-type", "labelValue": "gpu"},
            QueueingHint.QUEUE,
            id="enforced-label-now-met",
        ),
        # isSchedulableAfterNodeChange: "was matching" asks only the pod's own required
        # affinity, so a node relabelled to meet addedAffinity is skipped, as in Go.
        pytest.param(
            node(foo="bar"),
            node(foo="bar", zone="foo"),
            ADDED,
            QueueingHint.QUEUE_SKIP,
            id="enforced-affinity-now-met-but-pod-affinity-was-already",
        ),
        pytest.param(
            node(),
            node(foo="bar", zone="foo"),
            ADDED,
            QueueingHint.QUEUE,
            id="both-now-met",
        ),
    ],
)
def test_node_change_hint(
    old: Node | None, new: Node, args: dict[str, Any] | None, want: QueueingHint
) -> None:
    assert hint(args)(AFFINE, old, new) is want


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        # One bad value: the field.Invalid message alone; the path keeps the term index.
        (
            [
                (10, {"matchExpressions": [expr("zone", "In", "a")]}),
                (5, {"matchExpressions": [expr("disk", "In", "ssd"), expr("size", "Gt", "1e3")]}),
            ],
            '[1].matchExpressions[1].values[0]: Invalid value: "1e3": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        # Two: an Aggregate, "[a, b]".
        (
            [
                (1, {"matchExpressions": [expr("a", "Lt", "x")]}),
                (1, {"matchExpressions": [expr("b", "Gt", "99999999999999999999")]}),
            ],
            "[[0].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' "
            "operators, the value must be an integer, [1].matchExpressions[0].values[0]: "
            "Invalid value: \"99999999999999999999\": for 'Gt', 'Lt' operators, the value "
            "must be an integer]",
        ),
    ],
)
def test_pre_score_fails_on_a_preferred_term_that_does_not_parse(
    terms: list[tuple[int, dict[str, Any]]], want: str
) -> None:
    # NodeAffinity.PreScore returns getPodPreferredNodeAffinity's parse error
    # (nodeaffinity.NewPreferredSchedulingTerms); the runtime wraps it.
    pod = make_pod("p").affinity(preferred(*terms)).obj()
    st = plugin().pre_score(CycleState(), pod, [])
    assert st is not None
    assert (st.code, st.message()) == (Code.ERROR, want)


def test_pre_score_ignores_bad_values_of_weight_zero_terms() -> None:
    pod = make_pod("p").affinity(preferred((0, {"matchExpressions": [expr("a", "Gt", "x")]}))).obj()
    st = plugin().pre_score(CycleState(), pod, [])
    assert st is not None
    assert st.code == Code.SKIP
