"""NodeName: spec.nodeName pins a pod to one node."""

from __future__ import annotations

import pytest

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource
from asched.framework.status import Code
from asched.plugins.nodename import ERR_REASON, NAME, NodeName
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info


@pytest.mark.parametrize(
    ("pod", "node", "fits"),
    [
        pytest.param(make_pod("p").obj(), "n1", True, id="no-node-name"),
        pytest.param(make_pod("p").node("n1").obj(), "n1", True, id="same-node"),
        pytest.param(make_pod("p").node("n2").obj(), "n1", False, id="other-node"),
    ],
)
def test_filter(pod: Pod, node: str, fits: bool) -> None:
    st = NodeName(None, FakeHandle()).filter(CycleState(), pod, node_info(make_node(node).obj()))
    if fits:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (ERR_REASON,),
            NAME,
        )


def test_registers_node_add_without_hint() -> None:
    """NodeName.EventsToRegister: a node add, no hint (always Queue), as in Go."""
    [reg] = NodeName(None, FakeHandle()).events_to_register()
    assert (reg.event.resource, reg.event.action, reg.hint) == (
        EventResource.NODE,
        ActionType.ADD,
        None,
    )
