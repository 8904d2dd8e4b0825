"""NodeInfo accounting as kube-scheduler's NodeInfo does it."""

from __future__ import annotations

from asched.framework.nodeinfo import NodeInfo
from asched.testing import make_node, make_pod


def test_used_ports_are_a_set_as_in_go() -> None:
    # Two pods on one node with the same host port (one placed around the scheduler):
    # HostPortInfo is a set, so removing either frees the port.
    ni = NodeInfo(make_node("n").obj())
    a = make_pod("a").host_port(8080).node("n").obj()
    b = make_pod("b").host_port(8080).node("n").obj()
    ni.add_pod(a)
    ni.add_pod(b)
    assert len(ni.used_ports) == 1
    ni.remove_pod(a)
    assert ni.used_ports == {}
    assert [p.name for p in ni.pods] == ["b"]
