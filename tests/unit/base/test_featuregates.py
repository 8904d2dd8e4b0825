"""`--feature-gates`: which values of kube-scheduler's gates asched accepts, and the errors."""

from __future__ import annotations

import pytest

from asched.base import featuregates


@pytest.mark.parametrize(
    ("flag", "name", "value"),
    [
        # Switches: both values honoured.
        ("OpportunisticBatching=false", "OpportunisticBatching", False),
        ("DRAWorkloadResourceClaims=true", "DRAWorkloadResourceClaims", True),
        ("CompositePodGroup=true", "CompositePodGroup", True),
        # Inert: both accepted (scheduler_perf's PreemptionBasic sets false, its
        # *_AsyncAPICallsEnabled workloads true).
        ("SchedulerAsyncAPICalls=false", "SchedulerAsyncAPICalls", False),
        ("SchedulerAsyncAPICalls=true", "SchedulerAsyncAPICalls", True),
        # The behaviour asched always has.
        ("GenericWorkload=true", "GenericWorkload", True),
        ("TopologyAwareWorkloadScheduling=true", "TopologyAwareWorkloadScheduling", True),
        ("SchedulerAsyncPreemption=true", "SchedulerAsyncPreemption", True),
        ("DRAPartitionableDevices=true", "DRAPartitionableDevices", True),
        ("DRAListTypeAttributes=false", "DRAListTypeAttributes", False),
        # Locked in 1.37 to the value asched has.
        ("DynamicResourceAllocation=true", "DynamicResourceAllocation", True),
        ("NodeDeclaredFeatures=true", "NodeDeclaredFeatures", True),
    ],
    ids=str,
)
def test_accepted_values(flag: str, name: str, value: bool) -> None:
    assert featuregates.parse(flag)[name] is value


def test_defaults_are_the_values_asched_runs_with() -> None:
    gates = featuregates.parse("")
    # kube-scheduler's defaults where asched has both behaviours...
    assert gates["OpportunisticBatching"]
    assert not gates["DRAWorkloadResourceClaims"]
    assert not gates["CompositePodGroup"]
    assert not gates["SchedulerAsyncAPICalls"]
    # ...and asched's fixed behaviour where kube-scheduler's default is the other one.
    assert gates["GenericWorkload"]
    assert gates["TopologyAwareWorkloadScheduling"]
    assert set(featuregates.SWITCHES) == {
        "OpportunisticBatching",
        "DRAWorkloadResourceClaims",
        "CompositePodGroup",
    }


def test_one_flag_sets_several_gates() -> None:
    gates = featuregates.parse("GenericWorkload=true, SchedulerAsyncAPICalls=true,")
    assert gates == featuregates.parse("") | {"SchedulerAsyncAPICalls": True}


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("Foo=true", "unrecognized feature gate: Foo"),
        ("OpportunisticBatching", "missing bool value for OpportunisticBatching"),
        ("OpportunisticBatching=maybe", "invalid value of OpportunisticBatching=maybe"),
        # Locked: component-base's wording.
        (
            "NodeDeclaredFeatures=false",
            "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true",
        ),
        (
            "DynamicResourceAllocation=false",
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked",
        ),
        # Not honoured: the gate, the value and why.
        (
            "SchedulerAsyncPreemption=false",
            "cannot set feature gate SchedulerAsyncPreemption to false: asched preempts only "
            "asynchronously",
        ),
        ("GenericWorkload=false", "GenericWorkload to false: asched always schedules pod groups"),
        (
            "TopologyAwareWorkloadScheduling=false",
            "TopologyAwareWorkloadScheduling to false: asched always places pod groups",
        ),
        ("DRAConsumableCapacity=false", "DRAConsumableCapacity to false: .* always has"),
        ("DRADeviceCompatibilityGroups=true", "DRADeviceCompatibilityGroups to true: .* not"),
    ],
    ids=str,
)
def test_refused_values(flag: str, words: str) -> None:
    with pytest.raises(featuregates.FeatureGateError, match=words):
        featuregates.parse(flag)


def test_set_current_refuses_what_parse_refuses() -> None:
    try:
        with pytest.raises(featuregates.FeatureGateError, match="GenericWorkload to false"):
            featuregates.set_current({"GenericWorkload": False})
        # The refusal left the values in force as they were.
        assert featuregates.enabled("GenericWorkload")
        featuregates.set_current({"DRAWorkloadResourceClaims": True})
        assert featuregates.enabled("DRAWorkloadResourceClaims")
    finally:
        featuregates.set_current(featuregates.DEFAULTS)
    assert not featuregates.enabled("DRAWorkloadResourceClaims")
