"""Victims for a pod group (groupvictims.py, after PodGroupEvaluator.selectVictimsOnDomain).

The group's simulation is replaced by CPU arithmetic: each case says how much CPU the
group's members need on each node, and the group "fits" when every node has that much
free with the removed pods gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from asched.api import Pod
from asched.plugins.defaultpreemption.groupvictims import (
    Unit,
    select_victims_on_domain,
    victim_units,
)
from asched.plugins.defaultpreemption.pdb import PodDisruptionBudget, pdb_violations
from asched.plugins.defaultpreemption.pdb import decode_pdb as _decode_pdb
from tests.builders import make_pod

CAPACITY = 4000
PREEMPTOR = 1000


@dataclass(frozen=True)
class Running:
    name: str
    node: str
    cpu: int
    priority: int = 1
    # Minutes after the epoch of the scenario: earlier is more important.
    created: int = 0
    app: str = ""
    group: str = ""


def _pod(r: Running) -> Pod:
    b = (
        make_pod(r.name)
        .node(r.node)
        .priority(r.priority)
        .cpu(f"{r.cpu}m")
        .created(f"2026-01-01T00:{r.created:02d}:00Z")
    )
    if r.app:
        b = b.label("app", r.app)
    if r.group:
        b = b.scheduling_group(r.group)
    return b.obj()


def _pdb(app: str, allowed: int) -> PodDisruptionBudget:
    return _decode_pdb(
        {
            "metadata": {"namespace": "default", "name": f"pdb-{app}"},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed},
        }
    )


@dataclass(frozen=True)
class Case:
    id: str
    running: Sequence[Running]
    # CPU the group's members need on each node.
    need: Mapping[str, int]
    want: Sequence[str]
    want_violations: int = 0
    want_group_disruptions: int = 0
    pdbs: Sequence[tuple[str, int]] = ()
    whole_groups: frozenset[str] = field(default_factory=frozenset)


# A low group with one 1-CPU pod on each node, and a later 2-CPU pod on a.
GROUP_AND_LONE_POD = [
    Running("g1", "a", 1000, group="g"),
    Running("g2", "b", 1000, group="g"),
    Running("x", "a", 2000, created=5),
]

CASES = [
    Case(
        "minimal set, the small pod reprieved",
        [
            Running("l1", "a", 3000),
            Running("l2", "b", 3000, created=1),
            Running("s1", "a", 500, created=2),
        ],
        {"a": 3000, "b": 3000},
        ["l1", "l2"],
    ),
    Case(
        "the higher priority is reprieved first",
        [Running("lo", "a", 2000, priority=1), Running("hi", "a", 2000, priority=5, created=1)],
        {"a": 2000},
        ["lo"],
    ),
    Case(
        "among equals the earlier started is reprieved first",
        [Running("late", "a", 2000, created=5), Running("early", "a", 2000, created=1)],
        {"a": 2000},
        ["late"],
    ),
    Case(
        "a pod a budget protects is reprieved before a more important one",
        [Running("old", "a", 2000, created=0), Running("guarded", "a", 2000, created=3, app="x")],
        {"a": 2000},
        ["old"],
        pdbs=[("x", 0)],
    ),
    Case(
        "a protected pod that cannot be reprieved counts as a violation",
        [Running("old", "a", 2000, created=0), Running("guarded", "a", 2000, created=3, app="x")],
        {"a": 4000},
        ["old", "guarded"],
        want_violations=1,
        pdbs=[("x", 0)],
    ),
    Case(
        "a budget with room is no violation",
        [Running("guarded", "a", 4000, app="x")],
        {"a": 1000},
        ["guarded"],
        pdbs=[("x", 1)],
    ),
    Case(
        "disruptionMode All: the whole group is reprieved before a lone pod",
        GROUP_AND_LONE_POD,
        {"a": 3000},
        ["x"],
        whole_groups=frozenset({"g"}),
    ),
    Case(
        "disruptionMode All: a group member in the way takes its siblings with it",
        GROUP_AND_LONE_POD,
        {"a": 4000},
        ["g1", "g2", "x"],
        want_group_disruptions=1,
        whole_groups=frozenset({"g"}),
    ),
    Case(
        "disruptionMode Single: only the member in the way goes",
        GROUP_AND_LONE_POD,
        {"a": 4000},
        ["g1", "x"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_select_victims_on_domain(case: Case) -> None:
    pods = [_pod(r) for r in case.running]
    cpu = {r.name: r.cpu for r in case.running}
    units = victim_units(
        pods,
        PREEMPTOR,
        lambda p: (
            f"default/{p.scheduling_group}" if p.scheduling_group in case.whole_groups else ""
        ),
    )
    calls: list[frozenset[str]] = []

    async def fits(removed: Sequence[Pod]) -> bool:
        gone = {p.name for p in removed}
        calls.append(frozenset(gone))
        for node, need in case.need.items():
            used = sum(cpu[p.name] for p in pods if p.node_name == node and p.name not in gone)
            if CAPACITY - used < need:
                return False
        return True

    chosen = await select_victims_on_domain(units, [_pdb(a, n) for a, n in case.pdbs], fits)

    assert sorted(p.name for p in chosen.pods) == sorted(case.want)
    assert chosen.num_pdb_violations == case.want_violations
    assert chosen.num_group_disruptions == case.want_group_disruptions
    # One check per unit: the reprieve loop never re-simulates the whole group.
    assert len(calls) == len(units)


def test_victims_come_back_most_important_first() -> None:
    pods = [
        _pod(Running("p1", "a", 1, priority=1, created=1)),
        _pod(Running("p5", "a", 1, priority=5)),
        _pod(Running("g1", "a", 1, priority=1, created=9, group="g")),
    ]
    units = victim_units(pods, PREEMPTOR, lambda p: "default/g" if p.scheduling_group else "")
    ordered = sorted(units, key=Unit.importance)
    # Priority first, then a group before a lone pod (victimRank) whatever its age.
    assert [u.pods[0].name for u in ordered] == ["p5", "g1", "p1"]


def test_only_lower_priority_units_are_victims() -> None:
    pods = [
        _pod(Running("same", "a", 1, priority=PREEMPTOR)),
        _pod(Running("low", "a", 1)),
        _pod(Running("gh1", "a", 1, priority=PREEMPTOR, group="h")),
        _pod(Running("gl1", "a", 1, group="l")),
        _pod(Running("gl2", "b", 1, group="l")),
    ]
    units = victim_units(
        pods, PREEMPTOR, lambda p: f"default/{p.scheduling_group}" if p.scheduling_group else ""
    )
    assert sorted((u.group, tuple(p.name for p in u.pods)) for u in units) == [
        ("", ("low",)),
        ("default/l", ("gl1", "gl2")),
    ]


def test_pdb_violations_count_per_unit() -> None:
    a = [_pod(Running(n, "a", 1, app="x")) for n in ("a1", "a2", "a3")]
    # One disruption allowed: the first pod spends it, the next two each break it.
    assert pdb_violations([(a[0], a[1]), (a[2],)], [_pdb("x", 1)]) == [1, 1]
    assert pdb_violations([(a[0],), (a[1],)], []) == [0, 0]
