"""The best placement of a group cycle: the PlacementScore plugins' total first, then
asched's tie rule (the tightest fit, then the name). Generating placements is the
TopologyPlacementGenerator plugin's (tests/unit/plugins/test_topologyplacement.py), the
PodGroupPodsCount score its own (tests/unit/plugins/test_podgrouppodscount.py)."""

from __future__ import annotations

import pytest

from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement
from asched.scheduler import placement
from asched.scheduler.placement import Candidate
from tests.builders import make_node, make_pod


def cand(name: str, placed: int, cpu: int = 0, mem: int = 0) -> Candidate:
    return Candidate(Placement(name, ()), placed, cpu, mem)


def test_highest_total_wins() -> None:
    assert placement.best([cand("a", 2), cand("b", 3)], [66, 100]).placement.name == "b"


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        pytest.param([cand("a", 3, cpu=4000), cand("b", 3, cpu=1000)], "b", id="least-free-cpu"),
        pytest.param([cand("b", 3, 0, 5), cand("a", 3, 0, 5)], "a", id="then-the-name"),
        pytest.param([cand("a", 3, 0, 9), cand("b", 3, 0, 5)], "b", id="then-least-free-memory"),
    ],
)
def test_equal_totals_go_to_the_tightest_fit_then_the_name(
    candidates: list[Candidate], want: str
) -> None:
    assert placement.best(candidates, [100, 100]).placement.name == want


def test_leftover_counts_the_placement_nodes_only() -> None:
    nodes = [
        NodeInfo(make_node("n0").capacity(cpu="4", memory="8Gi").obj()),
        NodeInfo(make_node("n1").capacity(cpu="2", memory="4Gi").obj()),
    ]
    nodes[1].add_pod(make_pod("p").cpu("500m").node("n1").obj())
    cpu, _ = placement.leftover(Placement("b", (1,)), nodes)
    assert cpu == 1500
