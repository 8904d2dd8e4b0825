"""NodePorts: host port conflicts with the 0.0.0.0 wildcard, and the pod-deleted hint.

Cases follow kube-scheduler's nodeports/node_ports_test.go.
"""

from __future__ import annotations

import pytest

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.plugins.nodeports import ERR_REASON, NAME, NodePorts
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info


def ports(name: str, *specs: str) -> PodBuilder:
    """`proto/ip/port` specs, as kube-scheduler's newPod helper takes them."""
    b = make_pod(name)
    for spec in specs:
        proto, ip, port = spec.split("/")
        b.host_port(int(port), proto, ip)
    return b


def running(*specs: str) -> Pod:
    return ports("running", *specs).node("n1").obj()


@pytest.mark.parametrize(
    ("pod", "existing", "fits"),
    [
        pytest.param(ports("p", "UDP/127.0.0.1/8080").obj(), [], True, id="nothing-running"),
        pytest.param(
            ports("p", "UDP/127.0.0.1/8080").obj(),
            [running("UDP/127.0.0.1/9090")],
            True,
            id="other-port",
        ),
        pytest.param(
            ports("p", "UDP/127.0.0.1/8080").obj(),
            [running("UDP/127.0.0.1/8080")],
            False,
            id="same-udp-port",
        ),
        pytest.param(
            ports("p", "TCP/127.0.0.1/8080").obj(),
            [running("TCP/127.0.0.1/8080")],
            False,
            id="same-tcp-port",
        ),
        pytest.param(
            ports("p", "TCP/127.0.0.1/8001").obj(),
            [running("TCP/127.0.0.2/8001")],
            True,
            id="different-host-ip",
        ),
        pytest.param(
            ports("p", "UDP/127.0.0.1/8001").obj(),
            [running("TCP/127.0.0.1/8001")],
            True,
            id="different-protocol",
        ),
        pytest.param(
            ports("p", "UDP/127.0.0.1/8001", "TCP/127.0.0.1/8001").obj(),
            [running("UDP/127.0.0.1/8001")],
            False,
            id="second-port-conflicts",
        ),
        pytest.param(
            ports("p", "UDP/127.0.0.1/8001").obj(),
            [running("UDP/0.0.0.0/8001")],
            False,
            id="running-wildcard-conflicts",
        ),
        pytest.param(
            ports("p", "TCP/0.0.0.0/8001").obj(),
            [running("TCP/127.0.0.1/8001")],
            False,
            id="wanted-wildcard-conflicts",
        ),
        pytest.param(
            ports("p", "TCP/0.0.0.0/8001").obj(),
            [running("UDP/127.0.0.1/8001")],
            True,
            id="wildcard-other-protocol",
        ),
        pytest.param(
            ports("p", "TCP//8001").obj(),
            [running("TCP/10.0.0.1/8001")],
            False,
            id="empty-ip-means-wildcard",
        ),
    ],
)
def test_filter(pod: Pod, existing: list[Pod], fits: bool) -> None:
    plugin = NodePorts(None, FakeHandle())
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None
    st = plugin.filter(state, pod, node_info(make_node("n1").obj(), *existing))
    if fits:
        assert st is None
    else:
        assert st is not None
        assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, (ERR_REASON,), NAME)


def test_pod_without_host_ports_skips() -> None:
    _, st = NodePorts(None, FakeHandle()).pre_filter(CycleState(), make_pod("p").obj(), [])
    assert st is not None
    assert st.code == Code.SKIP


def test_events() -> None:
    regs = NodePorts(None, FakeHandle()).events_to_register()
    assert {(r.event.resource, r.event.action, r.hint is None) for r in regs} == {
        (EventResource.POD, ActionType.DELETE, False),
        (EventResource.NODE, ActionType.ADD, True),
    }


TARGET = ports("target", "TCP/0.0.0.0/8080").obj()


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            ports("d", "TCP/0.0.0.0/8080").obj(), QueueingHint.QUEUE_SKIP, id="unscheduled-pod"
        ),
        pytest.param(
            ports("d", "TCP/0.0.0.0/8080").node("n1").obj(), QueueingHint.QUEUE, id="held-the-port"
        ),
        pytest.param(
            ports("d", "TCP/0.0.0.0/8080").nominated("n1").obj(),
            QueueingHint.QUEUE,
            id="nominated-with-the-port",
        ),
        pytest.param(
            ports("d", "TCP/0.0.0.0/9090").node("n1").obj(),
            QueueingHint.QUEUE_SKIP,
            id="held-another-port",
        ),
        pytest.param(make_pod("d").node("n1").obj(), QueueingHint.QUEUE_SKIP, id="no-ports"),
    ],
)
def test_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    [reg] = [r for r in NodePorts(None, FakeHandle()).events_to_register() if r.hint]
    assert reg.hint is not None
    assert reg.hint(TARGET, deleted, None) is want
