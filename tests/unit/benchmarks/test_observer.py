"""BindObserver's record of bindings, from the pods its watch shows."""

from __future__ import annotations

from typing import Any

from benchmarks.observer import BindObserver


def pod(name: str, node: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeName": node} if node else {}}


def test_a_pod_seen_on_a_second_node_is_a_double_binding() -> None:
    obs = BindObserver(client=None, namespace="ns", expected=10)  # type: ignore[arg-type]
    obs._see(pod("a"), 1.0)
    obs._see(pod("a", "n1"), 2.0)
    obs._see(pod("a", "n1"), 3.0)  # the same binding again: a later MODIFIED event
    obs._see(pod("b", "n2"), 4.0)
    assert obs.rebound == {}
    obs._see(pod("a", "n3"), 5.0)
    assert obs.rebound == {"a": ["n1", "n3"]}
    assert obs.bound["a"].node == "n1"
    assert obs.bound["a"].at == 2.0
