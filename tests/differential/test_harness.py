"""The harness itself, without a cluster: scenarios load strictly, pods are placed where
the scenario says, and the comparison notices every kind of difference."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from tests.differential.compare import differences, known_difference_problems
from tests.differential.harness import reference_drift
from tests.differential.layout import SCENARIO_LABEL, Placement
from tests.differential.outcomes import PodOutcome, ScenarioOutcome
from tests.differential.scenario import (
    KnownDifference,
    Scenario,
    ScenarioError,
    load_scenarios,
    parse_scenario,
)
from tests.differential.schedulers import ASCHED, KUBE, Side

BASE: dict[str, Any] = {
    "id": "s",
    "plugins": ["NodeResourcesFit"],
    "description": "d",
    "nodes": [{"name": "a"}, {"name": "b"}],
    "pods": [{"name": "p1", "cpu": "1"}, {"name": "p2"}],
}
FAIL = "0/3 nodes are available: 2 Insufficient cpu."


def scenario(**changes: Any) -> Scenario:
    return parse_scenario({**BASE, **changes}, "test")


def outcome(**pods: PodOutcome) -> ScenarioOutcome:
    return ScenarioOutcome(pods)


BOUND_A = PodOutcome(
    node="a", scheduled_note="Successfully assigned <pod> to <node>", reasons=("Scheduled",)
)
BOUND_B = dataclasses.replace(BOUND_A, node="b")
FAILED = PodOutcome(first_failure=FAIL, condition=FAIL, reasons=("FailedScheduling",))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"colour": "red"}, "unknown field(s) ['colour']"),
        ({"pods": [{"name": "p1", "cpus": "1"}]}, "unknown field(s) ['cpus']"),
        ({"pods": [{"name": "p1", "node": "a"}]}, "`node` is required for existing pods"),
        ({"existing": [{"name": "e1", "node": "z"}]}, "names unknown node z"),
        ({"expect_nodes": {"p9": "a"}}, "unknown pods ['p9']"),
        ({"expect_scheduled": 1}, "is a count exactly when interchangeable"),
        ({"interchangeable": True, "expect_scheduled": ["p1"]}, "is a count exactly when"),
        ({"pods": [{"name": "p1"}, {"name": "p1"}]}, "pod names must be unique"),
        ({"known_difference": {"doc": "x", "differs": ["colour"]}}, "non-empty subset"),
        ({"pods": [{"name": "p1", "status": {"phase": "Running"}}]}, "for existing pods only"),
        ({"then": [{"delete": "p9"}]}, "`then` names unknown pod p9"),
        ({"then": [{"relabel": "p1"}]}, "`relabel` needs `labels`"),
        ({"then": [{"delete": "p1", "relabel": "p1"}]}, "one of `delete: <pod>`"),
    ],
    ids=[
        "unknown-key",
        "unknown-pod-key",
        "node-on-new-pod",
        "unknown-node",
        "unknown-expected-pod",
        "count-without-interchangeable",
        "names-with-interchangeable",
        "duplicate-pod",
        "unknown-comparison",
        "status-on-new-pod",
        "then-unknown-pod",
        "relabel-without-labels",
        "delete-and-relabel",
    ],
)
def test_invalid_scenarios_are_rejected(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        scenario(**changes)


def test_the_scenario_files_load() -> None:
    scenarios = load_scenarios()
    assert len({s.id for s in scenarios}) == len(scenarios) >= 40


def test_placement_pins_pods_to_their_scenario_and_resolves_node_names() -> None:
    s = scenario(
        pods=[
            {
                "name": "p1",
                "requests": {"nvidia.com/gpu": 1},
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchFields": [
                                            {
                                                "key": "metadata.name",
                                                "operator": "In",
                                                "values": ["{{node:b}}"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    }
                },
                "kube_spec": {"nodeSelector": {"node-type": "gpu"}},
            }
        ]
    )
    p = Placement(s, 7, "drun")
    a_side, k_side = Side(ASCHED, "as-x"), Side(KUBE, "ks-x")
    a, k = p.pod(s.pods[0], a_side), p.pod(s.pods[0], k_side)
    assert a["metadata"]["namespace"] == "as-x-07-s"
    assert a["spec"]["schedulerName"] == "as-x-default"
    assert a["spec"]["nodeSelector"] == {SCENARIO_LABEL: "drun-07"}
    assert k["spec"]["nodeSelector"] == {SCENARIO_LABEL: "drun-07", "node-type": "gpu"}
    term = a["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["drun-07-b"]
    resources = a["spec"]["containers"][0]["resources"]
    assert resources["limits"] == {"nvidia.com/gpu": "1"}
    assert [n.name for n in p.node_specs()] == ["drun-07-a", "drun-07-b"]
    assert p.local_node("drun-07-b") == "b"


def test_seed_profile_maps_to_default_for_kube_scheduler() -> None:
    assert Side(KUBE, "ks").scheduler_name("seed") == "ks-default"
    assert Side(ASCHED, "as").scheduler_name("seed") == "as-seed"


@pytest.mark.parametrize(
    ("changes", "asched", "kube", "want"),
    [
        ({}, outcome(p1=BOUND_A, p2=FAILED), outcome(p1=BOUND_B, p2=FAILED), []),
        ({}, outcome(p1=BOUND_A, p2=BOUND_B), outcome(p1=BOUND_A, p2=FAILED), ["scheduled"]),
        (
            {"expect_same_node": ["p1"]},
            outcome(p1=BOUND_A, p2=FAILED),
            outcome(p1=BOUND_B, p2=FAILED),
            ["node"],
        ),
        (
            {},
            outcome(p1=BOUND_A, p2=dataclasses.replace(FAILED, first_failure=FAIL + ".")),
            outcome(p1=BOUND_A, p2=FAILED),
            ["message"],
        ),
        (
            {},
            outcome(
                p1=dataclasses.replace(
                    BOUND_A, reasons=("FailedScheduling", "Scheduled"), first_failure=FAIL
                ),
                p2=FAILED,
            ),
            outcome(p1=BOUND_A, p2=FAILED),
            ["message"],
        ),
        (
            {"interchangeable": True, "expect_scheduled": 1},
            outcome(p1=BOUND_A, p2=FAILED),
            outcome(p1=FAILED, p2=BOUND_A),
            [],
        ),
        (
            {"interchangeable": True, "expect_scheduled": 1},
            outcome(p1=BOUND_A, p2=FAILED),
            outcome(p1=BOUND_A, p2=BOUND_B),
            ["message", "scheduled"],
        ),
    ],
    ids=[
        "equal-up-to-tied-node",
        "different-pods-bound",
        "different-node",
        "different-message",
        "one-failed-before-binding",
        "interchangeable-pods",
        "interchangeable-counts-differ",
    ],
)
def test_differences(
    changes: dict[str, Any], asched: ScenarioOutcome, kube: ScenarioOutcome, want: list[str]
) -> None:
    found = differences(scenario(**changes), asched, kube)
    assert sorted({m.comparison for m in found}) == want


def test_known_difference_must_be_exactly_as_documented() -> None:
    s = dataclasses.replace(
        scenario(),
        known_difference=KnownDifference(
            "volume-binding", frozenset({"message"}), asched="x", kube="y"
        ),
    )
    a = outcome(p1=BOUND_A, p2=dataclasses.replace(FAILED, first_failure="x", condition="x"))
    k = outcome(p1=BOUND_A, p2=dataclasses.replace(FAILED, first_failure="y", condition="y"))
    assert known_difference_problems(s, a, k, differences(s, a, k)) == []
    # The difference went away: the test says so.
    gone = known_difference_problems(s, k, k, differences(s, k, k))
    assert any("is gone" in p for p in gone)
    # Another comparison differs too: undocumented.
    b = outcome(p1=BOUND_B, p2=a.pods["p2"])
    s2 = dataclasses.replace(s, expect_same_node=("p1",))
    problems = known_difference_problems(s2, b, k, differences(s2, b, k))
    assert [p for p in problems if p.startswith("undocumented: [node]")]


def test_reference_drift_names_the_two_reference_runs() -> None:
    s = dataclasses.replace(scenario(), expect_same_node=("p1",))
    assert reference_drift(s, outcome(p1=BOUND_A, p2=FAILED), outcome(p1=BOUND_A, p2=FAILED)) == ()
    drift = reference_drift(s, outcome(p1=BOUND_A, p2=FAILED), outcome(p1=BOUND_B, p2=FAILED))
    assert drift == ("[node] p1: run 1 a, run 2 b",)
