"""The harness itself, without a cluster: scenarios load strictly, pods are placed where
the scenario says, and the comparison notices every kind of difference."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from tests.differential.allocations import (
    AllocationOutcome,
    allocation_differences,
    allocation_problems,
    read_allocations,
    selector_text,
)
from tests.differential.claims import (
    PROVISIONED,
    ClaimOutcome,
    claim_differences,
    read_claims,
)
from tests.differential.compare import (
    differences,
    known_difference_problems,
    reference_problems,
)
from tests.differential.harness import (
    HarnessError,
    as_judged,
    asched_skip_reason,
    reference_drift,
)
from tests.differential.layout import RUN_LABEL, SCENARIO_LABEL, Placement, scenario_local
from tests.differential.outcomes import GroupOutcome, PodOutcome, ScenarioOutcome, retry_gap
from tests.differential.scenario import (
    POD_GROUP_API,
    Action,
    AllocationTemplate,
    KnownDifference,
    PodGroupTemplate,
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
        ({"expect_prompt_retry": ["p9"]}, "expect_prompt_retry names unknown pods ['p9']"),
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
        "prompt-retry-unknown-pod",
    ],
)
def test_invalid_scenarios_are_rejected(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        scenario(**changes)


GANG: dict[str, Any] = {
    "native_gang": True,
    "pod_groups": [{"name": "g", "minCount": 2}],
    "pods": [{"name": "p1", "cpu": "1", "group": "g"}, {"name": "p2", "group": "g"}],
}


def gang(**changes: Any) -> Scenario:
    return scenario(**{**GANG, **changes})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"native_gang": False}, "need `native_gang: true`"),
        ({"native_gang": "yes"}, "native_gang: must be true or false"),
        ({"pod_groups": [{"name": "g"}]}, "pod_groups[0].minCount: required, an integer >= 1"),
        ({"pod_groups": [{"name": "g", "minCount": 0}]}, "pod_groups[0].minCount: required"),
        ({"pod_groups": [{"name": "g", "minCount": "2"}]}, "pod_groups[0].minCount: required"),
        ({"pod_groups": [{"name": "g", "minCount": True}]}, "pod_groups[0].minCount: required"),
        ({"pod_groups": [{"minCount": 2}]}, "pod_groups[0].name: required"),
        ({"pod_groups": [{"name": "g", "minCount": 2, "size": 3}]}, "unknown field(s) ['size']"),
        ({"pod_groups": ["g"]}, "pod_groups[0]: must be a mapping"),
        (
            {"pod_groups": [{"name": "g", "minCount": 2, "topologyKey": 7}]},
            "pod_groups[0].topologyKey: must be a node label key",
        ),
        (
            {"pod_groups": [{"name": "g", "minCount": 2, "create_after_pods": "no"}]},
            "pod_groups[0].create_after_pods: must be true or false",
        ),
        (
            {"pod_groups": [{"name": "g", "minCount": 2}, {"name": "g", "minCount": 3}]},
            "pod_groups names must be unique",
        ),
        ({"pods": [{"name": "p1", "group": ""}]}, "pods[0].group: must be a PodGroup name"),
        (
            {"pod_groups": [{"name": "g", "minCount": 1, "disruptionMode": "Some"}]},
            "pod_groups[0].disruptionMode: All or Single",
        ),
        ({"expect_group": {"h": "True"}}, "expect_group names unknown PodGroup h"),
        ({"expect_group": {"g": "Maybe"}}, "expect_group.g: one of ['False', 'True', 'none']"),
        (
            {
                "pod_groups": [{"name": "g", "minCount": 2, "racy_condition": True}],
                "expect_group": {"g": "True"},
            },
            "its condition is racy_condition",
        ),
        ({"expect_waiting": ["p9"]}, "expect_waiting names unknown pods ['p9']"),
        (
            {"expect_waiting": ["p1"], "expect_scheduled": ["p1"]},
            "both expect_waiting and expect_scheduled",
        ),
        ({"then": [{"set_min_count": "h", "minCount": 1}]}, "names unknown PodGroup h"),
        ({"then": [{"set_min_count": "g"}]}, "then[0].minCount: required, an integer >= 1"),
        ({"then": [{"delete": "p1", "minCount": 1}]}, "`minCount` goes with `set_min_count`"),
        ({"then": [{"add_node": "a"}]}, "`add_node` names a, not a `later` node"),
        ({"then": [{"add_node": "a", "delete": "p1"}]}, "one of `delete: <pod>`"),
        (
            {"nodes": [{"name": "a"}, {"name": "c", "later": True}]},
            "`later` node c needs a `then: add_node`",
        ),
        (
            {
                "nodes": [{"name": "a"}, {"name": "c", "later": True}],
                "then": [{"add_node": "c"}, {"add_node": "c"}],
            },
            "a `later` node is added once",
        ),
        (
            {"nodes": [{"name": "a"}, {"name": "c", "later": True, "unschedulable": True}]},
            "a `later` node cannot have images",
        ),
        (
            {
                "nodes": [{"name": "a"}, {"name": "c", "later": True}],
                "then": [{"add_node": "c"}],
                "existing": [{"name": "e1", "node": "c"}],
            },
            "existing pod e1 on `later` node c",
        ),
    ],
    ids=[
        "gang-without-flag",
        "flag-not-bool",
        "min-count-missing",
        "min-count-zero",
        "min-count-string",
        "min-count-bool",
        "group-name-missing",
        "group-unknown-key",
        "group-not-mapping",
        "topology-key-not-string",
        "create-after-pods-not-bool",
        "duplicate-group",
        "empty-pod-group",
        "group-on-existing-pod",
        "expect-group-unknown",
        "expect-group-bad-state",
        "expect-group-racy",
        "expect-waiting-unknown",
        "waiting-and-scheduled",
        "set-min-count-unknown-group",
        "set-min-count-without-count",
        "min-count-without-set",
        "add-node-not-later",
        "two-actions-in-one",
        "later-node-never-added",
        "later-node-added-twice",
        "later-node-with-status",
        "existing-on-later-node",
    ],
)
def test_invalid_gang_scenarios_are_rejected(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        gang(**changes)


def test_gang_scenario_parses() -> None:
    s = gang(
        nodes=[{"name": "a"}, {"name": "c", "later": True}],
        pod_groups=[
            {"name": "g", "minCount": 2, "topologyKey": "rack", "priorityClassName": "high"},
            {"name": "h", "minCount": 1, "create_after_pods": True},
        ],
        pods=[
            {"name": "p1", "cpu": "1", "group": "g"},
            {"name": "p2", "group": "h"},
            {"name": "p3", "group": "nosuch"},
        ],
        then=[{"add_node": "c"}, {"set_min_count": "g", "minCount": 1}],
        expect_waiting=["p2", "p3"],
        expect_group={"g": "True", "h": "none"},
    )
    assert s.native_gang
    assert s.pod_groups == (
        PodGroupTemplate("g", 2, "rack", priority_class="high"),
        PodGroupTemplate("h", 1, create_after_pods=True),
    )
    assert s.late_groups == (s.pod_groups[1],)
    assert s.has_then
    assert [n.name for n in s.first_nodes] == ["a"]
    assert s.then == (Action(node="c"), Action(group="g", min_count=1))
    assert s.expect_waiting == {"p2", "p3"}
    assert s.expect_group == {"g": "True", "h": "none"}
    assert s.pods[0].body["spec"]["schedulingGroup"] == {"podGroupName": "g"}
    assert s.pods[2].body["spec"]["schedulingGroup"] == {"podGroupName": "nosuch"}
    # Late PodGroups alone make a `then` phase.
    assert gang(pod_groups=[{"name": "g", "minCount": 2, "create_after_pods": True}]).has_then
    assert not gang().has_then


def test_pod_groups_are_placed_in_each_sides_namespace() -> None:
    s = gang(
        nodes=[{"name": "a"}, {"name": "c", "later": True}],
        pod_groups=[{"name": "g", "minCount": 2, "topologyKey": "rack"}],
        then=[{"add_node": "c"}],
    )
    p = Placement(s, 3, "drun")
    k_side = Side(KUBE, "ks-x")
    body = p.pod_group(s.pod_groups[0], k_side)
    assert body == {
        "apiVersion": POD_GROUP_API,
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ks-x-03-s", "labels": {RUN_LABEL: "drun-ks-x"}},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": "rack"}]},
        },
    }
    assert p.pod_group_path(k_side, "g") == (
        f"/apis/{POD_GROUP_API}/namespaces/ks-x-03-s/podgroups/g"
    )
    pod = p.pod(s.pods[0], k_side)
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "g"}
    # The later node is not among the shared ones, but has the scenario's name and label.
    assert [n.name for n in p.node_specs()] == ["drun-03-a"]
    assert p.late_node_names() == ["drun-03-c"]


def test_a_disruption_all_group_and_its_existing_member() -> None:
    s = gang(
        pod_groups=[{"name": "lo", "minCount": 1, "disruptionMode": "All"}],
        existing=[{"name": "e1", "node": "a", "group": "lo"}],
    )
    p = Placement(s, 3, "drun")
    side = Side(KUBE, "ks-x")
    assert p.pod_group(s.pod_groups[0], side)["spec"]["disruptionMode"] == {"all": {}}
    assert p.existing_pod(s.existing[0], side)["spec"]["schedulingGroup"] == {"podGroupName": "lo"}
    assert p.node_spec(s.nodes[1]).labels[SCENARIO_LABEL] == "drun-03"


def test_asched_side_switches() -> None:
    plain, native = scenario(), gang()
    assert asched_skip_reason(plain, {}) == ""
    # asched schedules native gangs: their scenarios are compared like any other.
    assert asched_skip_reason(native, {}) == ""
    only_kube = {"ASCHED_DIFF_SIDES": "kube-scheduler"}
    assert "ASCHED_DIFF_SIDES=kube-scheduler" in asched_skip_reason(plain, only_kube)
    assert asched_skip_reason(plain, {"ASCHED_DIFF_SIDES": "asched, kube-scheduler"}) == ""
    for bad in ("asched", "kube", ""):
        with pytest.raises(HarnessError, match="the reference always runs"):
            asched_skip_reason(plain, {"ASCHED_DIFF_SIDES": bad})


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
            "seed-label-args", frozenset({"message"}), asched="x", kube="y"
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


GROUP_TRUE = GroupOutcome("True", "Scheduled", "")
GROUP_FALSE = GroupOutcome("False", "Unschedulable", "pod group is unschedulable")


@pytest.mark.parametrize(
    ("asched_group", "kube_group", "racy", "want"),
    [
        (GROUP_TRUE, GROUP_TRUE, False, []),
        (GROUP_TRUE, GROUP_FALSE, False, ["group"]),
        (GROUP_FALSE, dataclasses.replace(GROUP_FALSE, message="other"), False, ["group"]),
        (GroupOutcome(), GROUP_FALSE, False, ["group"]),
        (GROUP_TRUE, GROUP_FALSE, True, []),
    ],
    ids=["same", "status-differs", "message-differs", "missing-condition", "racy-ignored"],
)
def test_group_conditions_are_compared(
    asched_group: GroupOutcome, kube_group: GroupOutcome, racy: bool, want: list[str]
) -> None:
    s = gang(pod_groups=[{"name": "g", "minCount": 2, "racy_condition": racy}])
    a = ScenarioOutcome({"p1": FAILED, "p2": FAILED}, groups={"g": asched_group})
    k = ScenarioOutcome({"p1": FAILED, "p2": FAILED}, groups={"g": kube_group})
    assert sorted({m.comparison for m in differences(s, a, k)}) == want


def test_gang_reference_checks() -> None:
    s = gang(expect_waiting=["p1", "p2"], expect_scheduled=[], expect_group={"g": "none"})
    waiting = PodOutcome()
    ok = ScenarioOutcome(
        {"p1": waiting, "p2": waiting}, groups={"g": GroupOutcome()}, silent=frozenset({"p1", "p2"})
    )
    assert reference_problems(s, ok) == []
    bad = ScenarioOutcome(
        {"p1": FAILED, "p2": waiting}, groups={"g": GROUP_FALSE}, silent=frozenset({"p2"})
    )
    problems = reference_problems(s, bad)
    assert any("expected p1 to wait without events" in p for p in problems), problems
    assert any("PodGroupInitiallyScheduled=none" in p for p in problems), problems
    # A pod silent in one run and not in the other is a message difference.
    assert [m.comparison for m in differences(s, ok, bad)].count("message") >= 1


@pytest.mark.parametrize(
    ("asched_gap", "kube_gap", "differs", "reference_ok"),
    [
        pytest.param(0.05, 0.03, False, True, id="both-prompt"),
        pytest.param(1.6, 0.03, True, True, id="asched-waited-out-the-backoff"),
        pytest.param(1.6, 1.2, False, False, id="neither-prompt"),
        pytest.param(None, 0.03, True, True, id="asched-never-failed-first"),
    ],
)
def test_prompt_retry_is_timed_from_the_last_failure(
    asched_gap: float | None, kube_gap: float | None, differs: bool, reference_ok: bool
) -> None:
    s = scenario(expect_prompt_retry=["p1"])
    a = outcome(p1=dataclasses.replace(BOUND_A, retry_gap=asched_gap), p2=FAILED)
    k = outcome(p1=dataclasses.replace(BOUND_A, retry_gap=kube_gap), p2=FAILED)
    assert ("timing" in {m.comparison for m in differences(s, a, k)}) is differs
    assert (reference_problems(s, k) == []) is reference_ok


def test_prompt_retry_is_judged_only_in_a_small_run() -> None:
    s = scenario(expect_prompt_retry=["p1"])
    assert as_judged(s, idle=True) is s
    assert as_judged(s, idle=False).expect_prompt_retry == frozenset()
    plain = scenario()
    assert as_judged(plain, idle=False) is plain


def test_retry_gap_is_measured_from_the_last_failure_before_binding() -> None:
    def ev(reason: str, at: str) -> dict[str, Any]:
        return {"reason": reason, "eventTime": f"2026-01-01T00:00:{at}Z"}

    events = [ev("FailedScheduling", "01.000000"), ev("FailedScheduling", "04.500000")]
    assert retry_gap([*events, ev("Scheduled", "04.520000")]) == pytest.approx(0.02)
    assert retry_gap(events) is None
    assert retry_gap([ev("Scheduled", "04.520000")]) is None


def test_reference_drift_names_the_two_reference_runs() -> None:
    s = dataclasses.replace(scenario(), expect_same_node=("p1",))
    assert reference_drift(s, outcome(p1=BOUND_A, p2=FAILED), outcome(p1=BOUND_A, p2=FAILED)) == ()
    drift = reference_drift(s, outcome(p1=BOUND_A, p2=FAILED), outcome(p1=BOUND_B, p2=FAILED))
    assert drift == ("[node] p1: run 1 a, run 2 b",)


STS: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db"},
    "spec": {
        "replicas": 2,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": []}},
        "volumeClaimTemplates": [
            {"metadata": {"name": "data"}, "spec": {"storageClassName": "{{cluster:fake}}"}}
        ],
    },
}
FAKE_CLASS: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "{{cluster:fake}}"},
    "provisioner": "fake.asched.io/local",
    "volumeBindingMode": "WaitForFirstConsumer",
}


def _sts(**spec: Any) -> dict[str, Any]:
    return {**STS, "spec": {**STS["spec"], **spec}}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"workloads": [{**STS, "kind": "Deployment"}]}, "only apiVersion apps/v1"),
        ({"workloads": [_sts(podManagementPolicy="OrderedReady")]}, "must be Parallel"),
        ({"workloads": [_sts(replicas=0)]}, "replicas: required"),
        (
            {"workloads": [_sts(template={"spec": {"schedulerName": "x", "containers": []}})]},
            "sets the template's schedulerName",
        ),
        ({"pods": [{"name": "db-1"}], "workloads": [STS]}, "replica has the name"),
        ({"pods": [], "workloads": []}, "no pods and no workloads"),
        ({"provision": ["fake"]}, "provision names fake"),
        (
            {"provision": ["fake"], "cluster_objects": [{**FAKE_CLASS, "provisioner": "x"}]},
            "provision names fake",
        ),
        ({"expect_node_set": ["z"]}, "expect_node_set names unknown nodes ['z']"),
        (
            {"interchangeable": True, "expect_scheduled": 1, "expect_claims": {"c": "pv"}},
            "not compared for interchangeable",
        ),
    ],
    ids=[
        "not-a-statefulset",
        "ordered-ready",
        "no-replicas",
        "scheduler-name-set",
        "replica-name-clash",
        "nothing-to-schedule",
        "provision-unknown-class",
        "provision-other-provisioner",
        "node-set-unknown-node",
        "claims-of-interchangeable-pods",
    ],
)
def test_invalid_storage_scenarios_are_rejected(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        scenario(**changes)


def test_workload_replicas_are_pods_of_the_scenario_on_each_side() -> None:
    s = scenario(
        pods=[],
        workloads=[STS],
        cluster_objects=[FAKE_CLASS],
        provision=["fake"],
        expect_claims={"data-db-0": "provisioned"},
        expect_scheduled=["db-0", "db-1"],
    )
    assert s.pod_names == ("db-0", "db-1")
    assert s.workloads[0].claim_names() == ("data-db-0", "data-db-1")
    assert s.compares_claims
    assert s.expect_claims == {"data-db-0": PROVISIONED}
    p = Placement(s, 3, "drun")
    side = Side(KUBE, "ks-x")
    body = p.workload(s.workloads[0], side)
    assert body["metadata"]["namespace"] == "ks-x-03-s"
    template = body["spec"]["template"]
    assert template["spec"]["schedulerName"] == "ks-x-default"
    assert template["spec"]["nodeSelector"] == {SCENARIO_LABEL: "drun-03"}
    assert template["metadata"]["labels"] == {"app": "db", RUN_LABEL: "drun-ks-x"}
    claim_class = body["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"]
    assert claim_class == p.cluster_name(side, "fake") == "ks-x-03-fake"
    assert p.workload_path(side, "db") == "/apis/apps/v1/namespaces/ks-x-03-s/statefulsets/db"
    assert p.local_volume(side, "ks-x-03-small") == "small"
    assert p.local_volume(side, "pvc-1234") == PROVISIONED


def _local_pv(name: str, host: str) -> dict[str, Any]:
    expr = {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}
    term = {"matchExpressions": [expr]}
    return {
        "metadata": {"name": name},
        "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [term]}}},
    }


def _claim(name: str, phase: str, volume: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"volumeName": volume}, "status": {"phase": phase}}


def _pod_using(claim: str, node: str) -> dict[str, Any]:
    return {
        "spec": {
            "nodeName": node,
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}],
        }
    }


def test_claims_are_read_with_their_volume_and_whether_it_is_on_the_pods_node() -> None:
    got = read_claims(
        [
            _claim("here", "Bound", "r-pv-a"),
            _claim("there", "Bound", "r-pv-b"),
            _claim("waiting", "Pending"),
            _claim("unused", "Bound", "pvc-9"),
        ],
        [_pod_using("here", "node-a"), _pod_using("there", "node-a")],
        {"r-pv-a": _local_pv("r-pv-a", "node-a"), "r-pv-b": _local_pv("r-pv-b", "node-b")},
        lambda real: real.removeprefix("r-") if real.startswith("r-") else PROVISIONED,
    )
    assert got == {
        "here": ClaimOutcome("Bound", "pv-a", True),
        "there": ClaimOutcome("Bound", "pv-b", False),
        "waiting": ClaimOutcome("Pending", "", None),
        "unused": ClaimOutcome("Bound", PROVISIONED, None),
    }


ON_A = ClaimOutcome("Bound", "pv-a", True)
ON_B = ClaimOutcome("Bound", "pv-b", True)


@pytest.mark.parametrize(
    ("expected", "asched", "kube", "want"),
    [
        ({}, {"c0": ON_A, "c1": ON_B}, {"c0": ON_B, "c1": ON_A}, 0),
        ({"c0": "pv-a"}, {"c0": ON_A, "c1": ON_B}, {"c0": ON_B, "c1": ON_A}, 1),
        ({}, {"c0": ON_A}, {"c0": ClaimOutcome("Pending")}, 2),
        ({}, {"c0": ON_A}, {"c0": dataclasses.replace(ON_A, on_node=False)}, 1),
        ({}, {"c0": ON_A, "c1": ON_A}, {"c0": ON_A, "c1": ON_B}, 1),
    ],
    ids=["replicas-swap-tied-pvs", "expected-claim-differs", "unbound", "off-node", "volumes"],
)
def test_claim_differences(
    expected: dict[str, str],
    asched: dict[str, ClaimOutcome],
    kube: dict[str, ClaimOutcome],
    want: int,
) -> None:
    assert len(claim_differences(expected, asched, kube)) == want


def test_storage_reference_checks_and_comparisons() -> None:
    s = scenario(
        pods=[],
        workloads=[STS],
        expect_node_set=["a", "b"],
        expect_claims={"data-db-0": "pv-a"},
    )
    claims = {"data-db-0": ON_A, "data-db-1": ON_B}
    good = ScenarioOutcome({"db-0": BOUND_A, "db-1": BOUND_B}, claims=claims)
    assert reference_problems(s, good) == []
    assert differences(s, good, good) == []
    stacked = ScenarioOutcome(
        {"db-0": BOUND_A, "db-1": FAILED},
        claims={"data-db-0": ON_B, "data-db-1": ClaimOutcome("Pending")},
    )
    problems = reference_problems(s, stacked)
    assert any("exactly ['a', 'b']" in p for p in problems), problems
    assert any("every replica of db bound, not ['db-1']" in p for p in problems), problems
    assert any("data-db-0 Bound to pv-a" in p for p in problems), problems
    assert any("data-db-1 Bound on its pod's node" in p for p in problems), problems
    found = {m.comparison for m in differences(s, good, stacked)}
    assert found == {"scheduled", "node", "volume"}


RACK = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}
    ]
}
NIC = {"name": "nic-0"}


@pytest.mark.parametrize(
    ("slice_", "message"),
    [
        ({"devices": [NIC]}, "`node` or `pool`, not both"),
        ({"node": "a", "pool": "p", "devices": [NIC]}, "`node` or `pool`, not both"),
        ({"node": "a", "all_nodes": True, "devices": [NIC]}, "go with `pool`"),
        ({"pool": "p", "all_nodes": True, "node_selector": RACK}, "not both"),
        ({"pool": "p", "shared_counters": {"s": {"m": "1"}}}, "only for a node's slice"),
    ],
    ids=["neither", "both", "all-nodes-on-node", "all-nodes-and-selector", "pool-counters"],
)
def test_invalid_slices_are_rejected(slice_: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        scenario(slices=[slice_])


def test_expect_allocations_must_name_scheduled_pods_and_say_everything() -> None:
    with pytest.raises(ScenarioError, match=re.escape("reserves unknown consumers ['p9']")):
        scenario(expect_allocations={"c": {"nodeSelector": None, "reservedFor": ["p9"]}})
    with pytest.raises(ScenarioError, match="needs `nodeSelector`"):
        scenario(expect_allocations={"c": {"reservedFor": ["p1"]}})


def test_pool_slices_are_laid_out_for_all_nodes_a_selector_or_per_device() -> None:
    s = scenario(
        slices=[
            {"node": "a", "devices": [NIC]},
            {"pool": "all", "driver": "x.example.com", "all_nodes": True, "devices": [NIC]},
            {"pool": "rack", "driver": "y.example.com", "node_selector": RACK, "devices": [NIC]},
            {"pool": "each", "devices": [{**NIC, "nodeName": "{{node:b}}"}]},
        ]
    )
    slices = Placement(s, 3, "drun").resource_slices()
    specs = {b["metadata"]["name"]: b["spec"] for b in slices}
    assert specs["drun-03-a-gpu"]["nodeName"] == "drun-03-a"
    assert specs["drun-03-a-gpu"]["pool"]["name"] == "drun-03-a"
    assert specs["drun-03-all-x"] == {
        "driver": "x.example.com",
        "pool": {"name": "drun-03-all", "generation": 1, "resourceSliceCount": 1},
        "devices": [NIC],
        "allNodes": True,
    }
    assert specs["drun-03-rack-y"]["nodeSelector"] == RACK
    assert "nodeName" not in specs["drun-03-rack-y"]
    each = specs["drun-03-each-gpu"]
    assert each["perDeviceNodeSelection"] is True
    assert each["devices"] == [{**NIC, "nodeName": "drun-03-b"}]


def _resource_claim(name: str, *reserved: str, **allocation: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"reservedFor": [{"resource": "pods", "name": p} for p in reserved]}
    if allocation:
        status["allocation"] = allocation
    return {"metadata": {"name": name}, "status": status}


def _results(*devices: str) -> dict[str, Any]:
    return {
        "results": [
            {"request": "nic", "driver": "d", "pool": "r-pool", "device": d, "shareID": "x"}
            for d in devices
        ]
    }


def _by_name(node: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }


def test_allocations_are_read_scenario_local_and_compared_exactly() -> None:
    def local(real: str) -> str:
        return real.removeprefix("r-")

    got = read_allocations(
        [
            _resource_claim("rack", "p2", "p1", devices=_results("nic-0"), nodeSelector=RACK),
            _resource_claim("node", "p3", devices=_results("nic-1"), nodeSelector=_by_name("r-c")),
            _resource_claim("free"),
        ],
        local,
    )
    assert got["rack"].devices == (("nic", "d", "pool", "nic-0"),)
    assert got["rack"].reserved_for == ("p1", "p2")
    assert got["node"].node_selector == selector_text(_by_name("c"), str)
    assert got["free"] == AllocationOutcome()
    assert allocation_differences(got, got) == []
    # asched before the fix: the rack's claim bound to the node it was allocated for.
    narrowed = {**got, "rack": dataclasses.replace(got["rack"], node_selector="x")}
    (found,) = allocation_differences(narrowed, got)
    assert found.startswith("claim rack:")
    expected = {
        "rack": AllocationTemplate(RACK, frozenset({"p1", "p2"})),
        "node": AllocationTemplate(_by_name("{{node:c}}"), frozenset({"p3"})),
    }
    assert allocation_problems(expected, got, scenario_local) == []
    (problem,) = allocation_problems(expected, narrowed, scenario_local)
    assert problem.startswith("expected claim rack allocated with nodeSelector")
    unordered = {"rack": AllocationTemplate(RACK, frozenset({"p1"}))}
    assert len(allocation_problems(unordered, got, scenario_local)) == 1


def test_allocation_comparison_is_its_own_kind() -> None:
    s = scenario(
        pods=[{"name": "p1"}],
        expect_allocations={"c": {"nodeSelector": None, "reservedFor": ["p1"]}},
    )
    free = AllocationOutcome(True, "", (("nic", "d", "pool", "nic-0"),), ("p1",))
    bound = dataclasses.replace(free, node_selector=selector_text(_by_name("a"), str))
    good = ScenarioOutcome({"p1": BOUND_A}, allocations={"c": free})
    bad = ScenarioOutcome({"p1": BOUND_A}, allocations={"c": bound})
    assert reference_problems(s, good) == []
    assert len(reference_problems(s, bad)) == 1
    assert {m.comparison for m in differences(s, bad, good)} == {"allocation"}
