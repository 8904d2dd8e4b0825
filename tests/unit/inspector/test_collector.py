"""The inspector's collector: what a decision record holds, the bounded ring, rejections.

Driven by the real scheduling and binding cycles of tests/unit/scheduler/test_cycles.py's
Harness (real Cache, queue, Algorithm, Framework with small plugins), with no cluster.
"""

from __future__ import annotations

import tracemalloc

import numpy as np

from asched.api import Pod
from asched.framework.types import PluginScores, ScoreTable
from asched.inspector.collector import Collector, Score
from tests.builders import make_node, make_pod
from tests.unit.scheduler.test_cycles import Harness, _pod


def _harness(ring_size: int = 200) -> tuple[Harness, Collector]:
    h = Harness()
    c = Collector(ring_size=ring_size, wall=lambda: 1000.0)
    h.scheduling.observer = c
    h.binding.observer = c
    return h, c


async def test_a_decision_holds_the_chosen_node_and_each_plugins_three_scores() -> None:
    h, c = _harness()
    a = await h.schedule(_pod("p", prefer="n2"))
    assert a is not None
    # The cycle only kept a reference: nothing is formatted until drain().
    assert list(c.decisions) == []
    c.drain()
    [d] = c.decisions
    assert (d.pod, d.profile, d.node, d.at) == ("default/p", "test", "n2", 1000.0)
    assert d.cycle_seconds > 0
    assert d.weights == {"Prefer": 1}
    assert d.scored[0].node == "n2"  # the chosen node leads
    assert {s.node for s in d.scored} == {"n1", "n2", "n3"}  # and the runners-up follow
    chosen = d.scored[0]
    assert chosen.plugins == {"Prefer": Score(10, 100, 100)}  # Prefer normalizes 10 -> 100
    assert chosen.total == 100
    assert [s.plugins["Prefer"] for s in d.scored[1:]] == [Score(1, 10, 10)] * 2


async def test_a_budgeted_drain_formats_a_few_and_says_more_are_left() -> None:
    h, c = _harness(ring_size=10)
    for i in range(5):
        await h.schedule(_pod(f"p{i}", prefer="n1"))
    assert c.drain(2) is True
    assert [d.pod for d in c.decisions] == ["default/p0", "default/p1"]
    assert c.drain(2) is True
    assert c.drain(2) is False
    assert [d.pod for d in c.decisions] == [f"default/p{i}" for i in range(5)]
    assert c.drain(2) is False  # nothing left: nothing formatted twice
    assert len(c.decisions) == 5


async def test_the_ring_keeps_the_newest_decisions_only() -> None:
    h, c = _harness(ring_size=3)
    for i in range(5):
        await h.schedule(_pod(f"p{i}", prefer="n1"))
    c.drain()
    assert [d.pod for d in c.decisions] == ["default/p2", "default/p3", "default/p4"]
    # Between drains the raw references are bounded by the ring size too.
    for i in range(5, 12):
        await h.schedule(_pod(f"p{i}", prefer="n1"))
    assert len(c._raw) == 3
    c.drain()
    assert [d.pod for d in c.decisions] == ["default/p9", "default/p10", "default/p11"]


async def test_a_rejection_counts_nodes_per_plugin_until_the_pod_leaves() -> None:
    h, c = _harness()
    for n in ("n1", "n2", "n3"):
        h.cache.update_node(make_node(n).obj())
    assert await h.schedule(_pod("p")) is None
    c.drain()
    r = c.rejections["default/p"]
    assert (r.nodes, r.plugins, r.profile) == (3, {"Label": 3}, "test")
    assert r.message == h.failed_scheduling()[0]  # the FailedScheduling message itself
    c.forget_rejections(["default/other"])
    assert "default/p" not in c.rejections


async def test_binds_and_their_latency_are_counted() -> None:
    h, c = _harness()
    a = await h.schedule(_pod("p", prefer="n3"))
    assert a is not None
    await h.binding.run(a)
    assert c.binds == 1
    assert c.bind_latency(0.99) > 0


def test_a_pod_placed_by_a_batching_hint_says_so() -> None:
    """Opportunistic batching evaluates one node and scores none: the record says why it
    has no ranking, and the JSON the page reads carries it."""
    from asched.inspector.snapshot import _decision as as_json

    c = Collector(ring_size=10, wall=lambda: 5.0)
    c.scheduled(make_pod("p").obj(), "batchable", "n7", 0.0002, None, hinted=True)
    c.scheduled(make_pod("q").obj(), "batchable", "n8", 0.0002, None)
    c.drain()
    hinted, alone = c.decisions
    assert (hinted.node, hinted.hinted, hinted.scored) == ("n7", True, ())
    assert alone.hinted is False
    assert as_json(hinted)["hinted"] is True


def test_runners_up_are_the_best_totals_and_never_a_pass_over_every_node() -> None:
    n = 10_000
    totals = np.arange(n, dtype=np.int64) % 97
    names_read: list[int] = []

    def name_at(i: int) -> str:
        names_read.append(i)
        return f"node-{i}"

    table = ScoreTable(
        lambda: [f"node-{i}" for i in range(n)],
        [PluginScores("P", 2, totals // 2, totals // 2, totals)],
        totals_array=totals,
        name_at=name_at,
    )
    c = Collector(runners_up=2)
    pod: Pod = make_pod("big").obj()
    c.scheduled(pod, "default-scheduler", "node-96", 0.001, (table, 96))
    c.drain()
    [d] = c.decisions
    assert [s.node for s in d.scored] == ["node-96", "node-193", "node-290"]
    assert [s.total for s in d.scored] == [96, 96, 96]
    assert d.scored[0].plugins == {"P": Score(48, 48, 96)}
    # Only the chosen node and the runners-up were named: not 10,000 names.
    assert len(names_read) == 3


def test_memory_stays_bounded_under_a_flood_of_decisions() -> None:
    c = Collector(ring_size=50)
    pod: Pod = make_pod("p").obj()
    table = ScoreTable(["a", "b"], [PluginScores("P", 1, [1, 2], [1, 2], [1, 2])], [1, 2])

    def burst() -> None:
        for _ in range(1000):
            c.scheduled(pod, "x", "b", 0.0, (table, 1))
        c.drain()

    tracemalloc.start()
    burst()  # the ring fills with records allocated under tracing
    before, _ = tracemalloc.get_traced_memory()
    for _ in range(20):
        burst()
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(c.decisions) == 50
    assert after - before < 64 * 1024
