"""TaintToleration: Filter on NoSchedule/NoExecute, reversed PreferNoSchedule score, hints.

Cases follow kube-scheduler's tainttoleration/taint_toleration_test.go.
"""

from __future__ import annotations

import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import EventResource, QueueingHint
from asched.framework.status import Code
from asched.framework.types import NodeScore
from asched.plugins.tainttoleration import ERR_REASON_UNTOLERATED, NAME, TaintToleration
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info


def tainted(*taints: tuple[str, str, str], name: str = "n1") -> Node:
    b = make_node(name)
    for key, value, effect in taints:
        b.taint(key, value, effect)
    return b.obj()


DEDICATED = ("dedicated", "user1", "NoSchedule")


@pytest.mark.parametrize(
    ("pod", "node", "rejected"),
    [
        pytest.param(make_pod("p").obj(), tainted(), False, id="no-taints"),
        pytest.param(make_pod("p").obj(), tainted(DEDICATED), True, id="untolerated-noschedule"),
        pytest.param(
            make_pod("p").toleration("dedicated", "user1", "NoSchedule").obj(),
            tainted(DEDICATED),
            False,
            id="tolerated-equal",
        ),
        pytest.param(
            make_pod("p").toleration("dedicated", "user2", "NoSchedule").obj(),
            tainted(DEDICATED),
            True,
            id="value-differs",
        ),
        pytest.param(
            make_pod("p").toleration("dedicated", operator="Exists").obj(),
            tainted(DEDICATED),
            False,
            id="exists-any-effect",
        ),
        pytest.param(
            make_pod("p").toleration("dedicated", "user1", "NoExecute").obj(),
            tainted(DEDICATED),
            True,
            id="effect-differs",
        ),
        pytest.param(
            make_pod("p").obj(),
            tainted(("k", "v", "PreferNoSchedule")),
            False,
            id="prefer-no-schedule-is-not-filtered",
        ),
        pytest.param(
            make_pod("p").obj(), tainted(("k", "v", "NoExecute")), True, id="untolerated-noexecute"
        ),
        pytest.param(
            make_pod("p").toleration("dedicated", "user1", "NoSchedule").obj(),
            tainted(DEDICATED, ("gpu", "", "NoSchedule")),
            True,
            id="one-of-two-tolerated",
        ),
    ],
)
def test_filter(pod: Pod, node: Node, rejected: bool) -> None:
    st = TaintToleration(None, FakeHandle()).filter(CycleState(), pod, node_info(node))
    if not rejected:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (ERR_REASON_UNTOLERATED,),
            NAME,
        )


PREFER_A = ("a", "1", "PreferNoSchedule")
PREFER_B = ("b", "2", "PreferNoSchedule")


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        # Raw counts 0, 2, 1 -> reversed over max 2: 100, 0, 50.
        pytest.param(
            make_pod("p").obj(),
            [
                tainted(name="n1"),
                tainted(PREFER_A, PREFER_B, name="n2"),
                tainted(PREFER_A, name="n3"),
            ],
            [100, 0, 50],
            id="fewest-wins",
        ),
        pytest.param(
            make_pod("p").toleration("a", "1", "PreferNoSchedule").obj(),
            [tainted(PREFER_A, name="n1"), tainted(PREFER_B, name="n2")],
            [100, 0],
            id="tolerated-prefer-taint",
        ),
        # A NoSchedule toleration does not tolerate a PreferNoSchedule taint.
        pytest.param(
            make_pod("p").toleration("a", "1", "NoSchedule").obj(),
            [tainted(PREFER_A, name="n1"), tainted(name="n2")],
            [0, 100],
            id="noschedule-toleration-ignored",
        ),
        # An empty effect tolerates every effect.
        pytest.param(
            make_pod("p").toleration("a", "1").obj(),
            [tainted(PREFER_A, name="n1"), tainted(name="n2")],
            [100, 100],
            id="empty-effect-tolerates",
        ),
        pytest.param(
            make_pod("p").obj(),
            [tainted(DEDICATED, name="n1"), tainted(name="n2")],
            [100, 100],
            id="only-prefer-taints-count",
        ),
    ],
)
def test_score(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    plugin = TaintToleration(None, FakeHandle())
    state = CycleState()
    infos = [node_info(n) for n in nodes]
    assert plugin.pre_score(state, pod, infos) is None
    scores = [NodeScore(ni.name, plugin.score(state, pod, ni)) for ni in infos]
    assert plugin.normalize_score(state, pod, scores) is None
    assert [s.score for s in scores] == want


def hints() -> dict[EventResource, object]:
    return {
        r.event.resource: r.hint for r in TaintToleration(None, FakeHandle()).events_to_register()
    }


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, tainted(), QueueingHint.QUEUE, id="added-untainted"),
        pytest.param(None, tainted(DEDICATED), QueueingHint.QUEUE_SKIP, id="added-untolerated"),
        pytest.param(tainted(DEDICATED), tainted(), QueueingHint.QUEUE, id="taint-removed"),
        pytest.param(tainted(), tainted(DEDICATED), QueueingHint.QUEUE_SKIP, id="taint-added"),
        pytest.param(
            tainted(), tainted(PREFER_A), QueueingHint.QUEUE_SKIP, id="was-already-tolerated"
        ),
    ],
)
def test_node_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    hint = hints()[EventResource.NODE]
    assert callable(hint)
    assert hint(make_pod("p").obj(), old, new) is want


def test_toleration_hint_only_for_the_pod_itself() -> None:
    hint = hints()[EventResource.UNSCHEDULED_POD]
    assert callable(hint)
    pod = make_pod("p").uid("u1").obj()
    assert hint(pod, pod, make_pod("p").uid("u1").toleration("a").obj()) is QueueingHint.QUEUE
    assert hint(pod, None, make_pod("q").uid("u2").obj()) is QueueingHint.QUEUE_SKIP
