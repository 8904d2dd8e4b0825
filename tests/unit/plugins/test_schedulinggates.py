"""SchedulingGates: PreEnqueue message and code, and the gates-removed event."""

from __future__ import annotations

import pytest

from asched.api import Pod
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.plugins.schedulinggates import NAME, SchedulingGates
from tests.builders import make_pod
from tests.unit.plugins.fakes import FakeHandle


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        pytest.param(make_pod("p").obj(), None, id="no-gates"),
        pytest.param(
            make_pod("p").gate("a").obj(), "waiting for scheduling gates: [a]", id="one-gate"
        ),
        pytest.param(
            make_pod("p").gate("example.com/b").gate("a").obj(),
            "waiting for scheduling gates: [example.com/b a]",
            id="gates-in-spec-order",
        ),
    ],
)
def test_pre_enqueue(pod: Pod, message: str | None) -> None:
    st = SchedulingGates(None, FakeHandle()).pre_enqueue(pod)
    if message is None:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (message,),
            NAME,
        )


def test_requeued_when_the_pods_gates_are_removed() -> None:
    [reg] = SchedulingGates(None, FakeHandle()).events_to_register()
    assert reg.event.resource is EventResource.UNSCHEDULED_POD
    assert reg.event.action == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    pod = make_pod("p").gate("a").obj()
    assert reg.hint is not None
    assert reg.hint(pod, pod, make_pod("p").obj()) is QueueingHint.QUEUE
