"""The algorithm with extenders: they filter after the Filter plugins and score beside
the Score plugins (findNodesThatPassExtenders, prioritizeNodes)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from asched.extender import EXTENDER_NAME, ExtenderError, Extenders
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.scheduler.algorithm import Algorithm, SchedulingError
from asched.scheduler.diagnosis import FitError
from tests.builders import make_node, make_pod
from tests.unit.extender.fakes import fake_extender, keep_only
from tests.unit.framework.fakes import framework


def _nodes(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).label("ok", "true").obj()) for n in names]


def _algorithm(*extenders: Any, seed: int = 0) -> Algorithm:
    return Algorithm(0, Extenders(extenders), rng=random.Random(seed))


async def test_filter_extender_sends_the_pod_elsewhere() -> None:
    ext, poster = fake_extender(keep_only("b"), filter_verb="filter", node_cache_capable=True)
    res = await _algorithm(ext).schedule_pod(
        framework(), CycleState(), make_pod("p").obj(), _nodes("a", "b", "c")
    )
    assert res.suggested_host == "b"
    assert poster.calls[0][1]["NodeNames"] == ["a", "b", "c"]


async def test_all_rejected_names_the_extenders_reasons() -> None:
    ext, _ = fake_extender(keep_only(), filter_verb="filter", node_cache_capable=True)
    nodes = _nodes("a", "b", "c")
    nodes.append(NodeInfo(make_node("d").obj()))  # the Filter plugin rejects this one
    with pytest.raises(FitError) as info:
        await _algorithm(ext).schedule_pod(framework(), CycleState(), make_pod("p").obj(), nodes)
    assert info.value.message() == (
        "0/4 nodes are available: 1 node(s) didn't have ok=true, 3 not mine."
    )
    assert EXTENDER_NAME in info.value.diagnosis.unschedulable_plugins


async def test_failing_extender_is_a_scheduling_error() -> None:
    err = ExtenderError("failed filter with extender at URL http://ext/filter, code 500")
    ext, _ = fake_extender(lambda v, r: err, filter_verb="filter")
    with pytest.raises(SchedulingError) as info:
        await _algorithm(ext).schedule_pod(
            framework(), CycleState(), make_pod("p").obj(), _nodes("a", "b")
        )
    assert info.value.status.message() == str(err)


async def test_filter_extender_sees_every_feasible_node_without_score_plugins() -> None:
    # findNodesThatPassFilters stops at one node only when nothing filters or scores after.
    ext, poster = fake_extender(keep_only("c"), filter_verb="filter", node_cache_capable=True)
    res = await _algorithm(ext).schedule_pod(
        framework(scores=()), CycleState(), make_pod("p").obj(), _nodes("a", "b", "c")
    )
    assert res.suggested_host == "c"
    assert poster.calls[0][1]["NodeNames"] == ["a", "b", "c"]


async def test_prioritizer_outweighs_the_plugins() -> None:
    # Prefer gives "a" 100 and the rest 10; the extender gives "c" 10 x weight 2 x 10 = 200.
    ext, _ = fake_extender(
        lambda v, r: [{"Host": "c", "Score": 10}], prioritize_verb="prioritize", weight=2
    )
    pod = make_pod("p").label("prefer", "a").obj()
    res = await _algorithm(ext).schedule_pod(framework(), CycleState(), pod, _nodes("a", "b", "c"))
    assert res.suggested_host == "c"
    assert res.table is not None
    assert res.table.totals == [100, 10, 210]


async def test_prioritizer_scores_alone_without_score_plugins() -> None:
    ext, _ = fake_extender(
        lambda v, r: [{"Host": "b", "Score": 1}], prioritize_verb="prioritize", weight=1
    )
    res = await _algorithm(ext).schedule_pod(
        framework(scores=()), CycleState(), make_pod("p").obj(), _nodes("a", "b", "c")
    )
    assert res.suggested_host == "b"


async def test_ties_among_extender_scored_nodes_are_random() -> None:
    ext, _ = fake_extender(
        lambda v, r: [{"Host": n, "Score": 5} for n in ("a", "b", "c", "d")],
        prioritize_verb="prioritize",
        weight=1,
    )
    picks = set()
    for seed in range(40):
        res = await _algorithm(ext, seed=seed).schedule_pod(
            framework(scores=()), CycleState(), make_pod("p").obj(), _nodes("a", "b", "c", "d")
        )
        picks.add(res.suggested_host)
    assert picks == {"a", "b", "c", "d"}


async def test_nominated_node_must_pass_the_extenders_too() -> None:
    ext, _ = fake_extender(keep_only("a"), filter_verb="filter", node_cache_capable=True)
    pod = make_pod("p").nominated("b").obj()
    res = await _algorithm(ext).schedule_pod(framework(), CycleState(), pod, _nodes("a", "b"))
    assert res.suggested_host == "a"
