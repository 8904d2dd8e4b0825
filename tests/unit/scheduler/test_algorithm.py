"""The scheduling algorithm: sampling, round robin, early stop, scoring, FitError wording."""

from __future__ import annotations

import random

import numpy as np
import pytest

from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.framework.types import ScoreTable
from asched.scheduler.algorithm import (
    Algorithm,
    SchedulingError,
    go_heap_top,
    num_feasible_nodes_to_find,
)
from asched.scheduler.diagnosis import Diagnosis, FitError, NoNodesAvailable
from tests.builders import make_node, make_pod
from tests.unit.framework.fakes import FakeServices, framework


def _nodes(n: int, ok: bool = True, prefix: str = "n") -> list[NodeInfo]:
    out = []
    for i in range(n):
        b = make_node(f"{prefix}{i}")
        if ok:
            b.label("ok", "true")
        out.append(NodeInfo(b.obj()))
    return out


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        (0, 50, 50),  # under 100 nodes: all
        (0, 99, 99),
        (0, 100, 100),  # adaptive 49% of 100 = 49 -> floor of 100
        (0, 1000, 420),  # 50 - 8 = 42%
        (0, 5000, 500),  # 50 - 40 = 10%
        (0, 10000, 500),  # max(50 - 80, 5) = 5%
        (30, 1000, 300),
        (100, 1000, 1000),
        (1, 1000, 100),  # never fewer than 100
    ],
    ids=str,
)
def test_num_feasible_nodes_to_find(percentage: int, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


async def test_stops_early_and_round_robins_start() -> None:
    algo = Algorithm(percentage_of_nodes_to_score=0)
    fwk = framework()
    nodes = _nodes(1000)
    feasible, _diag = await algo.find_nodes_that_fit(fwk, CycleState(), make_pod("p").obj(), nodes)
    assert len(feasible) == 420
    assert feasible[0].name == "n0"
    assert algo.next_start_node_index == 420
    feasible, _ = await algo.find_nodes_that_fit(fwk, CycleState(), make_pod("q").obj(), nodes)
    assert feasible[0].name == "n420"


async def test_without_score_plugins_the_first_feasible_node_ends_the_pass() -> None:
    # findNodesThatPassFilters: nothing would rank a second one.
    algo = Algorithm(percentage_of_nodes_to_score=0)
    fwk = framework(scores=())
    nodes = _nodes(3, ok=False, prefix="bad") + _nodes(1000)
    feasible, diag = await algo.find_nodes_that_fit(fwk, CycleState(), make_pod("p").obj(), nodes)
    assert [n.name for n in feasible] == ["n0"]
    assert len(diag.node_to_status) == 3
    assert algo.next_start_node_index == 4


async def test_every_node_is_evaluated_when_few_fit() -> None:
    algo = Algorithm(0)
    fwk = framework()
    nodes = _nodes(150, ok=False) + _nodes(3, prefix="good")
    feasible, diag = await algo.find_nodes_that_fit(fwk, CycleState(), make_pod("p").obj(), nodes)
    assert sorted(n.name for n in feasible) == ["good0", "good1", "good2"]
    assert len(diag.node_to_status) == 150
    assert diag.unschedulable_plugins == {"Label"}


async def test_fit_error_message_counts_and_sorts_reasons() -> None:
    algo = Algorithm(0)
    fwk = framework(filters=("Label", "AsyncFilter"), scores=())
    nodes = _nodes(2, ok=False) + _nodes(3, prefix="x-slow-reject")
    with pytest.raises(FitError) as err:
        await algo.schedule_pod(fwk, CycleState(), make_pod("p").obj(), nodes)
    assert err.value.message() == (
        "0/5 nodes are available: 2 node(s) didn't have ok=true, 3 async says no."
    )


async def test_pre_filter_rejection_message_and_absent_status() -> None:
    algo = Algorithm(0)
    fwk = framework(scores=())
    with pytest.raises(FitError) as err:
        await algo.schedule_pod(
            fwk, CycleState(), make_pod("p").label("prefilter", "reject").obj(), _nodes(4)
        )
    assert err.value.message() == "0/4 nodes are available: pod rejected at prefilter."
    d = err.value.diagnosis
    assert d.node_to_status.get("n3") is not None
    assert d.unschedulable_plugins == {"Label"}


async def test_pre_filter_result_narrows_nodes_and_reports_the_rest() -> None:
    algo = Algorithm(0)
    fwk = framework(args={"Label": frozenset({"n1"})}, scores=())
    feasible, diag = await algo.find_nodes_that_fit(
        fwk, CycleState(), make_pod("p").obj(), _nodes(3)
    )
    assert [n.name for n in feasible] == ["n1"]
    fe = FitError("default/p", 3, diag)
    assert diag.node_to_status.absent is not None
    assert diag.node_to_status.absent.message() == "node(s) didn't satisfy plugin(s) [Label]"
    assert fe.num_all_nodes == 3


async def test_no_nodes() -> None:
    with pytest.raises(NoNodesAvailable):
        await Algorithm(0).schedule_pod(framework(), CycleState(), make_pod("p").obj(), [])


async def test_plugin_error_is_scheduling_error() -> None:
    fwk = framework(filters=("Label", "Boom"), scores=())
    with pytest.raises(SchedulingError) as err:
        await Algorithm(0).schedule_pod(
            fwk, CycleState(), make_pod("p").label("boom", "1").obj(), _nodes(3)
        )
    assert err.value.status.plugin == "Boom"


async def test_best_score_wins() -> None:
    fwk = framework(scores=(("Prefer", 1),))
    res = await Algorithm(0).schedule_pod(
        fwk, CycleState(), make_pod("p").label("prefer", "n7").obj(), _nodes(10)
    )
    assert res.suggested_host == "n7"
    assert res.feasible_nodes == 10


@pytest.mark.parametrize(
    ("totals", "want"),
    [
        ([5, 5, 1], 0),  # the root holds a maximum: it stays
        ([1, 5, 5], 1),  # equal children: the left one
        ([1, 4, 5], 2),  # the right child only when strictly greater
        ([1, 5, 3, 9, 9, 2, 9], 3),  # left subtree's max 9 = right's: left, then its left
        ([1, 2, 3, 4, 5, 6, 9], 6),
        ([7, 7, 7, 7], 0),
        # A deep maximum wins over the root's right child: left subtrees win ties.
        ([0, 3, 9, 3, 3, 9, 9, 1, 1, 1, 9], 10),
    ],
)
def test_ties_go_to_the_node_kube_schedulers_score_heap_pops(totals: list[int], want: int) -> None:
    # NewSortedScoredNodes + Pop with every Randomizer 0 (no extenders): the result of
    # container/heap.Init's sift-downs, emulated step by step here.
    assert go_heap_top(np.asarray(totals, dtype=np.int64)) == want == _go_heap_init_pop(totals)
    names = [f"n{i}" for i in range(len(totals))]
    assert Algorithm(0).select_host(ScoreTable(names, totals=totals)) == names[want]


def _go_heap_init_pop(totals: list[int]) -> int:
    """container/heap Init then Pop, literally (Less: higher total), on indices."""
    h = list(range(len(totals)))

    def less(i: int, j: int) -> bool:
        return totals[h[i]] > totals[h[j]]

    def down(i: int, n: int) -> None:
        while True:
            j = 2 * i + 1
            if j >= n:
                return
            if j + 1 < n and less(j + 1, j):
                j += 1
            if not less(j, i):
                return
            h[i], h[j] = h[j], h[i]
            i = j

    n = len(h)
    for i in range(n // 2 - 1, -1, -1):
        down(i, n)
    return h[0]


def test_random_heaps_match_the_literal_emulation() -> None:
    rng = random.Random(3)
    for _ in range(500):
        totals = [rng.randrange(4) for _ in range(rng.randrange(1, 40))]
        assert go_heap_top(np.asarray(totals, dtype=np.int64)) == _go_heap_init_pop(totals)
    # Deeper heaps (up to 12 levels), few distinct values so the maximum is often tied
    # at several depths, and a unique maximum now and then (the fast path).
    for _ in range(60):
        size = rng.randrange(40, 3000)
        totals = [rng.randrange(rng.choice((3, 50, 10_000))) for _ in range(size)]
        assert go_heap_top(np.asarray(totals, dtype=np.int64)) == _go_heap_init_pop(totals)


async def test_nominated_node_is_tried_first() -> None:
    fwk = framework(scores=(("Prefer", 1),))
    pod = make_pod("p").label("prefer", "n1").nominated("n5").obj()
    res = await Algorithm(0).schedule_pod(fwk, CycleState(), pod, _nodes(10))
    assert res.suggested_host == "n5"


async def test_nominated_pods_count_during_filtering() -> None:
    services = FakeServices()
    fwk = framework(services=services)
    services.nominated["n0"] = [make_pod("big").priority(5).obj()]
    seen: list[tuple[str, int]] = []

    def spy(state: CycleState, pod: object, ni: NodeInfo) -> Status | None:
        seen.append((ni.name, len(ni.pods)))
        return None

    fwk._filterer._filters = [("Spy", spy, False)]
    await Algorithm(0).find_nodes_that_fit(fwk, CycleState(), make_pod("p").obj(), _nodes(2))
    assert ("n0", 1) in seen
    assert ("n1", 0) in seen


def test_fit_error_with_post_filter_message() -> None:
    d = Diagnosis()
    d.node_to_status.set("a", Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)))
    d.node_to_status.set("b", Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Too many pods")))
    d.post_filter_msg = "preemption: 0/2 nodes are available: 2 No preemption victims found"
    assert FitError("ns/p", 2, d).message() == (
        "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found"
    )


async def test_full_evaluation_filters_every_node_and_scores_a_lone_fit() -> None:
    """evaluate(full=True): no sampling, no round robin, no nominated shortcut, and the one
    feasible node is still scored (what explain and asched.testing show)."""
    algo = Algorithm(0)
    nodes = [*_nodes(999), *_nodes(1, prefix="last")]
    for ni in nodes[:999]:
        ni.node.labels.pop("ok")
    pod = make_pod("p").nominated("n3").obj()
    ev = await algo.evaluate(framework(), CycleState(), pod, nodes, full=True)
    assert [n.name for n in ev.feasible] == ["last0"]
    assert len(ev.diagnosis.node_to_status) == 999
    assert ev.table is not None
    assert ev.table.nodes == ["last0"]
    assert algo.next_start_node_index == 0


async def test_the_scheduler_mode_skips_scoring_a_lone_fit() -> None:
    algo = Algorithm(0)
    nodes = [*_nodes(1, prefix="only"), *_nodes(3, ok=False)]
    ev = await algo.evaluate(framework(), CycleState(), make_pod("p").obj(), nodes)
    assert [n.name for n in ev.feasible] == ["only0"]
    assert ev.table is None
    assert ev.error is None


async def test_an_error_is_returned_with_its_node_not_raised() -> None:
    fwk = framework(filters=("Label", "Boom"))
    ev = await Algorithm(0).evaluate(
        fwk, CycleState(), make_pod("p").label("boom", "1").obj(), _nodes(3), full=True
    )
    assert ev.error is not None
    assert ev.error.code == Code.ERROR
    assert ev.error_node == "n0"
    assert ev.table is None


async def test_checks_keep_every_plugin_verdict_and_go_past_an_error() -> None:
    fwk = framework(filters=("Label", "Boom"))
    nodes = [*_nodes(2), *_nodes(1, ok=False, prefix="bad")]
    ev = await Algorithm(0).evaluate(
        fwk, CycleState(), make_pod("p").label("boom", "1").obj(), nodes, full=True, checks=True
    )
    assert set(ev.checks) == {"n0", "n1", "bad0"}
    # One pass each (no nominated pods), both plugins asked on every node.
    assert [[name for name, _ in p] for p in ev.checks["bad0"]] == [["Label", "Boom"]]
    assert ev.diagnosis.node_to_status.get("bad0").plugin == "Label"  # type: ignore[union-attr]
    assert ev.filter_error is not None
    assert ev.error_node == "n0"
