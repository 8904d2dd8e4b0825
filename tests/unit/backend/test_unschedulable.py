"""UnschedulablePool: the (profile, plugin) index and the gated count."""

from __future__ import annotations

import pytest

from asched.api.podgroup import POD_GROUP_LABEL
from asched.backend.unschedulable import ANY_PLUGIN, UnschedulablePool
from asched.framework.types import QueuedPodInfo
from tests.builders import make_pod


def _qpi(
    name: str, *plugins: str, gate: str = "", scheduler: str = "s1", group: str = ""
) -> QueuedPodInfo:
    builder = make_pod(name).scheduler(scheduler)
    if group:
        builder = builder.scheduling_group(group)
    qpi = QueuedPodInfo(pod=builder.obj(), timestamp=0.0)
    qpi.unschedulable_plugins = set(plugins)
    qpi.gating_plugin = gate
    return qpi


def _pool() -> UnschedulablePool:
    pool = UnschedulablePool()
    for qpi in (
        _qpi("fit", "Fit"),
        _qpi("fit-taint", "Fit", "Taint"),
        _qpi("taint-other-profile", "Taint", scheduler="s2"),
        _qpi("no-plugin"),
        _qpi("gated", "Fit", gate="Gate"),
    ):
        pool.add(qpi)
    return pool


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        pytest.param([("s1", "Fit")], ["fit", "fit-taint"], id="one-plugin"),
        pytest.param([("s1", "Fit"), ("s1", "Taint")], ["fit", "fit-taint"], id="deduplicated"),
        pytest.param([("s2", "Taint")], ["taint-other-profile"], id="per-profile"),
        pytest.param([("s1", ANY_PLUGIN)], ["no-plugin"], id="no-rejector-bucket"),
        pytest.param([("s1", "Gate")], ["gated"], id="gated-filed-under-gate-only"),
        pytest.param([("s1", "Unknown")], [], id="nobody"),
    ],
)
def test_filed_under(keys: list[tuple[str, str]], expected: list[str]) -> None:
    assert sorted(q.pod.name for q in _pool().filed_under(keys)) == expected


def test_remove_unindexes_and_counts() -> None:
    pool = _pool()
    assert (len(pool), pool.gated, sorted(pool.profiles())) == (5, 1, ["s1", "s2"])
    for qpi in pool.pods():
        if qpi.pod.name in ("gated", "taint-other-profile"):
            pool.remove(qpi.uid)
    assert (len(pool), pool.gated, pool.profiles()) == (3, 0, ["s1"])
    assert pool.filed_under([("s1", "Gate"), ("s2", "Taint")]) == []


def test_readd_refiles_under_new_plugins() -> None:
    pool = UnschedulablePool()
    qpi = _qpi("p", "Fit")
    assert pool.add(qpi) is True
    qpi.unschedulable_plugins = {"Taint"}
    assert pool.add(qpi) is False
    assert pool.filed_under([("s1", "Fit")]) == []
    assert pool.filed_under([("s1", "Taint")]) == [qpi]


def _member(name: str, group: str, *plugins: str, gate: str = "") -> QueuedPodInfo:
    return _qpi(name, *plugins, gate=gate, scheduler="default-scheduler", group=group)


def test_scoped_lookup_reads_only_the_named_groups_of_the_scoped_key() -> None:
    pool = UnschedulablePool()
    for qpi in (
        _member("a1", "a", gate="Gang"),
        _member("a2", "a", "Gang"),
        _member("b1", "b", gate="Gang"),
        _member("fit-a", "a", "Fit"),
        _qpi("solo", "Gang", scheduler="default-scheduler"),
    ):
        pool.add(qpi)

    def names(
        keys: list[tuple[str, str]], scopes: dict[tuple[str, str], frozenset[str]]
    ) -> list[str]:
        return sorted(q.pod.name for q in pool.filed_under(keys, scopes))

    gang, fit = ("default-scheduler", "Gang"), ("default-scheduler", "Fit")
    assert names([gang], {}) == ["a1", "a2", "b1", "solo"]
    assert names([gang], {gang: frozenset({"default/a"})}) == ["a1", "a2"]
    assert names([gang], {gang: frozenset()}) == []
    # A scope narrows its own key only.
    assert names([gang, fit], {gang: frozenset({"default/b"})}) == ["b1", "fit-a"]
    # Removal and re-filing keep the group buckets in step with the index.
    for qpi in pool.pods():
        if qpi.pod.name in ("a1", "fit-a"):
            pool.remove(qpi.uid)
    assert names([gang, fit], {gang: frozenset({"default/a"})}) == ["a2"]
    a2 = next(q for q in pool.pods() if q.pod.name == "a2")
    a2.unschedulable_plugins = {"Fit"}
    pool.add(a2)
    assert names([gang], {gang: frozenset({"default/a"})}) == []
    assert names([fit], {fit: frozenset({"default/a"})}) == ["a2"]


def test_coscheduling_members_are_filed_by_their_label_group_too() -> None:
    # A Coscheduling member (pod-group label) is filed by that group; a pod naming a native
    # group and a label group is filed under both, so a scope naming either finds it.
    pool = UnschedulablePool()
    labelled = QueuedPodInfo(pod=make_pod("m1").label(POD_GROUP_LABEL, "g").obj(), timestamp=0.0)
    labelled.gating_plugin = "Coscheduling"
    both = QueuedPodInfo(
        pod=make_pod("m2").label(POD_GROUP_LABEL, "g").scheduling_group("n").obj(), timestamp=0.0
    )
    both.gating_plugin = "Coscheduling"
    other = QueuedPodInfo(pod=make_pod("x").label(POD_GROUP_LABEL, "h").obj(), timestamp=0.0)
    other.gating_plugin = "Coscheduling"
    for qpi in (labelled, both, other):
        pool.add(qpi)
    key = ("default-scheduler", "Coscheduling")

    def names(groups: frozenset[str]) -> list[str]:
        return sorted(q.pod.name for q in pool.filed_under([key], {key: groups}))

    assert names(frozenset({"default/g"})) == ["m1", "m2"]
    assert names(frozenset({"default/n"})) == ["m2"]
    pool.remove(both.uid)
    assert names(frozenset({"default/g"})) == ["m1"]
    assert names(frozenset({"default/n"})) == []
