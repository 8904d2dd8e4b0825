"""Scenario shapes and the checks that decide whether a run's placements are correct."""

from __future__ import annotations

import pytest

from benchmarks.observer import Binding
from benchmarks.scenarios import (
    SCENARIOS,
    ZONE_LABEL,
    Params,
    gang_census,
    gang_oversubscribed,
)
from benchmarks.schedulers import Kind
from benchmarks.workload import POD_GROUP_LABEL


def _bound(placements: dict[str, str]) -> dict[str, Binding]:
    return {pod: Binding(node, 0.0) for pod, node in placements.items()}


@pytest.mark.parametrize(
    ("bound_members", "expected"),
    [
        ({"g1": 3, "g2": 3}, (2, 0, 0)),
        ({"g1": 3, "g2": 1}, (1, 1, 0)),
        ({"g1": 0, "g2": 0}, (0, 0, 2)),
    ],
    ids=["all-complete", "one-partial", "none-bound"],
)
def test_gang_census(bound_members: dict[str, int], expected: tuple[int, int, int]) -> None:
    labels = {f"{g}-{m}": {POD_GROUP_LABEL: g} for g in bound_members for m in range(3)}
    bound = _bound({f"{g}-{m}": "n" for g, n in bound_members.items() for m in range(n)})
    census = gang_census(bound, labels, 3)
    got = (census["complete_gangs"], census["partial_gangs"], census["unbound_gangs"])
    assert got == expected
    assert census["violations"] == expected[1]


@pytest.mark.parametrize(
    ("gangs", "size", "over", "nodes", "fits"),
    [(300, 3, 1.5, 150, 200), (20, 50, 1.5, 167, 13), (10, 4, 1.0, 10, 10)],
    ids=["small-gangs", "large-gangs-do-not-divide", "exactly-full"],
)
def test_oversubscribed_capacity(gangs: int, size: int, over: float, nodes: int, fits: int) -> None:
    s = gang_oversubscribed(Params(gangs=gangs, gang_size=size, oversubscribe=over))
    assert len(s.nodes) == nodes
    assert s.bound_target == fits * size
    assert s.schedulers == (Kind.ASCHED,)
    assert s.settle_seconds is not None


def _verify(name: str, placements: dict[str, str], params: Params) -> dict[str, object]:
    scenario = SCENARIOS[name](params)
    assert scenario.verify is not None
    labels = {p["metadata"]["name"]: p["metadata"]["labels"] for p in scenario.pods}
    return scenario.verify(_bound(placements), labels)


def test_spread_check_counts_pods_per_zone() -> None:
    params = Params(nodes=3, pods=9)
    nodes = SCENARIOS["spread"](params).nodes
    assert sorted({n.labels[ZONE_LABEL] for n in nodes}) == ["zone-a", "zone-b", "zone-c"]
    skewed = {f"p{i}": nodes[0].name for i in range(9)}
    even = {f"p{i}": nodes[i % 3].name for i in range(9)}
    assert _verify("spread", skewed, params)["violations"] == 1
    assert _verify("spread", even, params) == {
        "zone_counts": [3, 3, 3],
        "max_skew": 0,
        "violations": 0,
    }


def test_anti_affinity_check_flags_shared_nodes() -> None:
    params = Params(nodes=4, pods=4)
    assert _verify("antiaffinity", {"a": "n1", "b": "n1", "c": "n2"}, params) == {
        "nodes_used": 2,
        "violations": 1,
    }


def test_anti_affinity_never_asks_more_pods_than_nodes() -> None:
    assert len(SCENARIOS["antiaffinity"](Params(nodes=10, pods=50)).pods) == 10


def test_basic_pods_follow_scheduler_perf_default() -> None:
    pod = SCENARIOS["basic"](Params(nodes=1, pods=1)).pods[0]
    container = pod["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}
    assert "schedulerName" not in pod["spec"]
