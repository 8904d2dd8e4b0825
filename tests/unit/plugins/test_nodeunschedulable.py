"""NodeUnschedulable: cordoned nodes, the unschedulable toleration, and hints."""

from __future__ import annotations

import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NAME, NodeUnschedulable
from asched.scheduler.handlers import node_update_action
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    ("pod", "cordoned", "rejected"),
    [
        pytest.param(make_pod("p").obj(), False, False, id="schedulable-node"),
        pytest.param(make_pod("p").obj(), True, True, id="cordoned-node"),
        pytest.param(
            make_pod("p").toleration(KEY, effect="NoSchedule", operator="Exists").obj(),
            True,
            False,
            id="tolerates-the-cordon",
        ),
        pytest.param(
            make_pod("p").toleration(operator="Exists").obj(),
            True,
            False,
            id="tolerates-everything",
        ),
        pytest.param(
            make_pod("p").toleration(KEY, effect="NoExecute", operator="Exists").obj(),
            True,
            True,
            id="wrong-effect",
        ),
    ],
)
def test_filter(pod: Pod, cordoned: bool, rejected: bool) -> None:
    n = make_node("n1").unschedulable(cordoned).obj()
    st = NodeUnschedulable(None, FakeHandle()).filter(CycleState(), pod, node_info(n))
    if not rejected:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (ERR_REASON_UNSCHEDULABLE,),
            NAME,
        )


def hints() -> dict[EventResource, object]:
    return {
        r.event.resource: r.hint for r in NodeUnschedulable(None, FakeHandle()).events_to_register()
    }


def cordon(flag: bool) -> Node:
    return make_node("n1").unschedulable(flag).obj()


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, cordon(False), QueueingHint.QUEUE, id="added-schedulable"),
        pytest.param(None, cordon(True), QueueingHint.QUEUE_SKIP, id="added-cordoned"),
        pytest.param(cordon(True), cordon(False), QueueingHint.QUEUE, id="uncordoned"),
        pytest.param(cordon(False), cordon(True), QueueingHint.QUEUE_SKIP, id="cordoned"),
        pytest.param(cordon(False), cordon(False), QueueingHint.QUEUE_SKIP, id="other-change"),
    ],
)
def test_node_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    hint = hints()[EventResource.NODE]
    assert callable(hint)
    assert hint(make_pod("p").obj(), old, new) is want


def test_toleration_hint() -> None:
    hint = hints()[EventResource.UNSCHEDULED_POD]
    assert callable(hint)
    pod = make_pod("p").uid("u1").obj()
    tolerating = make_pod("p").uid("u1").toleration(KEY, operator="Exists").obj()
    unrelated = make_pod("p").uid("u1").toleration("other", operator="Exists").obj()
    assert hint(pod, pod, tolerating) is QueueingHint.QUEUE
    assert hint(pod, pod, unrelated) is QueueingHint.QUEUE_SKIP
    other_pod = make_pod("q").uid("u2").toleration(KEY, operator="Exists").obj()
    assert hint(pod, None, other_pod) is QueueingHint.QUEUE_SKIP


def test_registered_events() -> None:
    # NodeUnschedulable.EventsToRegister: Node Add|UpdateNodeTaint, and the pod's own
    # toleration updates.
    regs = {
        r.event.resource: r.event.action
        for r in NodeUnschedulable(None, FakeHandle()).events_to_register()
    }
    assert regs[EventResource.NODE] == ActionType.ADD | ActionType.UPDATE_NODE_TAINT
    assert regs[EventResource.UNSCHEDULED_POD] == ActionType.UPDATE_POD_TOLERATION


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        # extractNodeSpecUnschedulableChange: only an uncordon is reported, as a taint change.
        pytest.param(cordon(True), cordon(False), ActionType.UPDATE_NODE_TAINT, id="uncordon"),
        pytest.param(cordon(False), cordon(True), ActionType(0), id="cordon"),
    ],
)
def test_cordon_classification(old: Node, new: Node, want: ActionType) -> None:
    assert node_update_action(old, new) == want
