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


def test_node_affinity_counts_pods_outside_zone1_and_zone2() -> None:
    params = Params(nodes=3, pods=2)
    scenario = SCENARIOS["nodeaffinity"](params)
    zone_of = {n.name: n.labels[ZONE_LABEL] for n in scenario.nodes}
    assert sorted(zone_of.values()) == ["zone1", "zone2", "zone3"]
    by_zone = {z: n for n, z in zone_of.items()}
    pods = [p["metadata"]["name"] for p in scenario.pods]
    ok = _verify("nodeaffinity", {pods[0]: by_zone["zone1"], pods[1]: by_zone["zone2"]}, params)
    bad = _verify("nodeaffinity", {pods[0]: by_zone["zone1"], pods[1]: by_zone["zone3"]}, params)
    assert (ok["violations"], bad["violations"]) == (0, 1)


def test_preferred_spread_reports_skew_without_calling_it_a_violation() -> None:
    params = Params(nodes=3, pods=7)
    scenario = SCENARIOS["preferred-spread"](params)
    constraint = scenario.pods[0]["spec"]["topologySpreadConstraints"][0]
    assert constraint["whenUnsatisfiable"] == "ScheduleAnyway"
    zone_a = next(n.name for n in scenario.nodes if n.labels[ZONE_LABEL] == "zone-a")
    out = _verify(
        "preferred-spread", {p["metadata"]["name"]: zone_a for p in scenario.pods}, params
    )
    assert out["zone_counts"] == [7, 0, 0]
    assert (out["skew_above_max"], out["violations"]) == (1, 0)


def test_churn_scenario_churns_and_its_pod_fits_no_node() -> None:
    from asched.api.quantity import parse_cpu_milli
    from benchmarks.churn import PRIORITY_CLASS, churn_node, churn_pod

    scenario = SCENARIOS["churn"](Params(nodes=2, pods=3))
    assert scenario.churn
    assert len(scenario.pods) == 3
    pod = churn_pod("c", "asched-bench")
    assert pod["spec"]["schedulerName"] == "asched-bench"
    assert pod["spec"]["priorityClassName"] == PRIORITY_CLASS
    need = parse_cpu_milli(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"])
    assert all(need > parse_cpu_milli(n.cpu) for n in scenario.nodes)
    assert churn_node("c")["status"]["allocatable"]["pods"] == "0"
