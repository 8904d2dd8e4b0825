"""Group preemption with the CompositePodGroup gate on: a victim goes with the highest
group above it that says disruptionMode All (getHighestAllAncestor), a composite
included."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from asched.api import Pod
from asched.base import featuregates
from asched.framework.workloads import COMPOSITE_POD_GROUPS, NATIVE_POD_GROUPS
from asched.plugins.defaultpreemption.executor import Executor
from asched.plugins.defaultpreemption.grouppreemption import GroupPreemption
from asched.plugins.defaultpreemption.groupvictims import victim_units
from tests.builders import make_composite_pod_group, make_native_pod_group, make_pod
from tests.unit.plugins.fakes import FakeHandle


@pytest.fixture(autouse=True)
def _gate() -> Iterator[None]:
    featuregates.set_current({"CompositePodGroup": True})
    yield
    featuregates.set_current(featuregates.DEFAULTS)


def _ignore(victims: int) -> None:
    """scheduler_preemption_victims is not under test."""


def _victim(name: str, group: str, node: str) -> Pod:
    return make_pod(name).uid(name).scheduling_group(group).node(node).priority(10).obj()


def test_a_composite_with_disruption_mode_all_is_one_victim() -> None:
    """g1 (under mid, under top) and g2 (under top) go together because top says All;
    a pod of a root group without All goes alone."""
    groups = [
        make_native_pod_group("g1").parent("mid").obj(),
        make_native_pod_group("g2").parent("top").obj(),
        make_native_pod_group("solo").obj(),
    ]
    composites = [
        make_composite_pod_group("top").disruption_all().obj(),
        make_composite_pod_group("mid").parent("top").obj(),
    ]
    handle = FakeHandle(
        stores={NATIVE_POD_GROUPS.resource: groups, COMPOSITE_POD_GROUPS.resource: composites}
    )
    gp = GroupPreemption(
        handle, "DefaultPreemption", Executor(handle, "DefaultPreemption"), list, _ignore
    )
    pods = [
        _victim("a", "g1", "n1"),
        _victim("b", "g2", "n2"),
        _victim("c", "solo", "n1"),
    ]
    preemptor = make_native_pod_group("hi").obj()
    units = victim_units(pods, 1000, lambda p: gp.disrupted_with(preemptor, p))
    assert sorted((u.group, sorted(p.name for p in u.pods)) for u in units) == [
        ("", ["c"]),
        ("CompositePodGroup/default/top", ["a", "b"]),
    ]


def test_with_the_gate_off_only_the_pod_group_counts() -> None:
    featuregates.set_current(featuregates.DEFAULTS)
    groups = [make_native_pod_group("g1").parent("top").obj()]
    composites = [make_composite_pod_group("top").disruption_all().obj()]
    handle = FakeHandle(
        stores={NATIVE_POD_GROUPS.resource: groups, COMPOSITE_POD_GROUPS.resource: composites}
    )
    gp = GroupPreemption(
        handle, "DefaultPreemption", Executor(handle, "DefaultPreemption"), list, _ignore
    )
    pod = _victim("a", "g1", "n1")
    assert gp.disrupted_with(make_native_pod_group("hi").obj(), pod) == ""
