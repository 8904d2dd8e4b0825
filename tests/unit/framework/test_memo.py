"""Node-static plugins are memoized: one call per node and pod key, again only for a node
whose Node object changed, bounded memory, and the same answers as the per-node path."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from asched.api import Node, Pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import PodKey
from asched.framework.memo import FilterMemo, KeySigner, ScoreMemo
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.testing import make_node, make_pod
from asched.testing.runner import Runner, enable

ZONE = "topology.kubernetes.io/zone"
FENCED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("outside the pod's zone",), "ZoneFence")


class ZoneFence:
    """Filter: a pod labelled zone=Z fits only nodes in zone Z; counts its calls."""

    def __init__(self, _args: Any = None, _handle: Any = None) -> None:
        self.calls: list[tuple[str, str]] = []

    @property
    def name(self) -> str:
        return "ZoneFence"

    def pod_key(self, pod: Pod) -> PodKey:
        return pod.labels.get("zone", "")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        self.calls.append((pod.labels.get("zone", ""), node_info.name))
        want = pod.labels.get("zone")
        return None if want is None or node_info.node.labels.get(ZONE) == want else FENCED

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        self.calls.append(("score", node_info.name))
        return node_info.allocatable.milli_cpu // 1000


def node(name: str, zone: str, cpu: str = "4") -> Node:
    return make_node(name).label(ZONE, zone).capacity(cpu=cpu, memory="8Gi").obj()


def pod(name: str, zone: str | None) -> Pod:
    b = make_pod(name)
    if zone is not None:
        b = b.label("zone", zone)
    return b.obj()


class Cluster:
    def __init__(self, nodes: list[Node]) -> None:
        self.cache, self.snapshot = Cache(), Snapshot()
        for n in nodes:
            self.cache.add_node(n)
        self.cache.update_snapshot(self.snapshot)

    def update(self, n: Node) -> None:
        self.cache.update_node(n)
        self.cache.update_snapshot(self.snapshot)

    def add(self, n: Node) -> None:
        self.cache.add_node(n)
        self.cache.update_snapshot(self.snapshot)

    def remove(self, n: Node) -> None:
        self.cache.remove_node(n.name)
        self.cache.update_snapshot(self.snapshot)

    def passed(self, memo: FilterMemo, p: Pod) -> dict[str, bool]:
        cols = self.snapshot.columns
        rows = self.snapshot.node_infos().rows  # type: ignore[attr-defined]
        v = memo.filter_batch(CycleState(), p, cols, rows)
        return {cols.names[r]: v is None or bool(v.passed[k]) for k, r in enumerate(rows.tolist())}


def test_one_call_per_node_and_pod_key() -> None:
    plugin = ZoneFence()
    memo = FilterMemo("ZoneFence", plugin)
    c = Cluster([node("a1", "a"), node("a2", "a"), node("b1", "b")])
    assert c.passed(memo, pod("p1", "a")) == {"a1": True, "a2": True, "b1": False}
    assert c.passed(memo, pod("p2", "a")) == {"a1": True, "a2": True, "b1": False}
    assert c.passed(memo, pod("p3", "b")) == {"a1": False, "a2": False, "b1": True}
    assert sorted(plugin.calls) == [
        ("a", "a1"), ("a", "a2"), ("a", "b1"), ("b", "a1"), ("b", "a2"), ("b", "b1"),
    ]  # fmt: skip


def test_a_node_update_recomputes_that_node_only() -> None:
    plugin = ZoneFence()
    memo = FilterMemo("ZoneFence", plugin)
    a2 = node("a2", "a")
    c = Cluster([node("a1", "a"), a2, node("b1", "b")])
    c.passed(memo, pod("p1", "a"))
    plugin.calls.clear()
    c.update(replace(a2, labels={ZONE: "b"}, resource_version="2"))
    assert c.passed(memo, pod("p2", "a")) == {"a1": True, "a2": False, "b1": False}
    assert plugin.calls == [("a", "a2")]


def test_pods_landing_on_a_node_do_not_invalidate_it() -> None:
    plugin = ZoneFence()
    memo = FilterMemo("ZoneFence", plugin)
    c = Cluster([node("a1", "a"), node("b1", "b")])
    c.passed(memo, pod("p1", "a"))
    plugin.calls.clear()
    c.cache.add_pod(make_pod("bound").node("a1").cpu("1").obj())
    c.cache.update_snapshot(c.snapshot)
    assert c.passed(memo, pod("p2", "a")) == {"a1": True, "b1": False}
    assert plugin.calls == []


def test_nodes_added_and_removed() -> None:
    plugin = ZoneFence()
    memo = FilterMemo("ZoneFence", plugin)
    b1 = node("b1", "b")
    c = Cluster([node("a1", "a"), b1])
    c.passed(memo, pod("p1", "a"))
    plugin.calls.clear()
    c.add(node("a0", "a"))  # renumbers the rows: the others keep their answers
    assert c.passed(memo, pod("p2", "a")) == {"a0": True, "a1": True, "b1": False}
    assert plugin.calls == [("a", "a0")]
    plugin.calls.clear()
    c.remove(b1)
    assert c.passed(memo, pod("p3", "a")) == {"a0": True, "a1": True}
    assert plugin.calls == []


def test_memory_is_bounded_by_the_number_of_keys() -> None:
    plugin = ZoneFence()
    memo = FilterMemo("ZoneFence", plugin, keys=2)
    c = Cluster([node("a1", "a")])
    for z in ("x", "y", "z"):
        c.passed(memo, pod(f"p{z}", z))
    assert len(memo._keys) == 2
    plugin.calls.clear()
    c.passed(memo, pod("again", "x"))  # evicted first: computed again
    assert plugin.calls == [("x", "a1")]


def test_an_error_verdict_is_left_to_the_per_node_path() -> None:
    class Broken(ZoneFence):
        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            return Status(Code.ERROR, ("no answer",), "ZoneFence")

    from asched.framework.columns import Unbatchable

    c = Cluster([node("a1", "a")])
    with pytest.raises(Unbatchable):
        c.passed(FilterMemo("ZoneFence", Broken()), pod("p", "a"))


def test_score_memo_reads_raw_scores_from_the_column() -> None:
    plugin = ZoneFence()
    memo = ScoreMemo("ZoneFence", plugin)
    c = Cluster([node("a1", "a", cpu="2"), node("b1", "b", cpu="8")])
    rows = c.snapshot.node_infos().rows  # type: ignore[attr-defined]
    for name in ("p1", "p2"):
        got = memo.score_batch(CycleState(), pod(name, None), c.snapshot.columns, rows)
        assert got.tolist() == [2, 8]
    assert plugin.calls == [("score", "a1"), ("score", "b1")]


def test_the_pod_key_signs_the_pod() -> None:
    signer = KeySigner("ZoneFence", ZoneFence())
    assert signer.sign_pod(pod("p", "a")) == signer.sign_pod(pod("q", "a"))
    assert signer.sign_pod(pod("p", "a")) != signer.sign_pod(pod("p", "b"))


async def test_through_the_framework_the_memo_answers_as_per_node() -> None:
    """The Runner's framework memoizes the plugin; its verdicts and scores are what the
    plugin says node by node, and a second pod with the same key costs no call."""
    plugin = ZoneFence()
    nodes = [node("a1", "a", cpu="2"), node("a2", "a", cpu="6"), node("b1", "b")]
    runner = Runner(
        [enable(lambda _a, _h: plugin, name="ZoneFence", points=["filter", "score"])],
        nodes=nodes,
    )
    first = await runner.schedule(pod("p1", "a"))
    assert first.rejected["b1"] == FENCED
    assert first.selected == "a2"
    calls = len(plugin.calls)
    second = await runner.schedule(pod("p2", "a"))
    assert second.rejected == first.rejected
    assert second.selected == "a2"
    assert len(plugin.calls) == calls


def test_a_profile_of_node_static_plugins_signs_pods() -> None:
    """pod_key signs for a plugin without sign_pod (opportunistic batching stays on);
    a plain per-node plugin keeps its profile from signing, as before."""

    class PerNode:
        def __init__(self, _args: Any = None, _handle: Any = None) -> None:
            return None

        @property
        def name(self) -> str:
            return "PerNode"

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            return None

    static = Runner([enable(ZoneFence, name="ZoneFence", points=["filter"])])
    plain = Runner([enable(PerNode, name="PerNode", points=["filter"])])
    a, b, c = pod("p1", "a"), pod("p2", "a"), pod("p3", "b")
    assert static.framework.sign_pod(a) is not None
    assert static.framework.sign_pod(a) == static.framework.sign_pod(b)
    assert static.framework.sign_pod(a) != static.framework.sign_pod(c)
    assert plain.framework.sign_pod(a) is None
