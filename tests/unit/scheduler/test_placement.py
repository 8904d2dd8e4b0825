"""Group placements: one per topology domain (TopologyPlacementGenerator), the best by
PodGroupPodsCount, and asched's tie rule (the tightest fit, then the name)."""

from __future__ import annotations

import pytest

from asched.framework.nodeinfo import NodeInfo
from asched.scheduler import placement
from asched.scheduler.placement import Candidate, Placement, PlacementError
from tests.builders import make_node, make_pod

RACK = "rack"


def nodes(*racks: str | None) -> list[NodeInfo]:
    out = []
    for i, r in enumerate(racks):
        b = make_node(f"n{i}")
        if r is not None:
            b = b.label(RACK, r)
        out.append(NodeInfo(b.obj()))
    return out


def test_no_constraint_is_one_placement_of_every_node() -> None:
    assert placement.generate("", nodes("a", None), []) == [Placement("", (0, 1))]


def test_one_placement_per_domain_in_name_order_without_unlabelled_nodes() -> None:
    got = placement.generate(RACK, nodes("b", "a", None, "b"), [])
    assert got == [Placement("a", (1,)), Placement("b", (0, 3))]


def test_scheduled_members_pin_their_domain() -> None:
    ns = nodes("a", "b", "b")
    bound = make_pod("m").node("n1").obj()
    assert placement.generate(RACK, ns, [bound]) == [Placement("b", (1, 2))]


def test_scheduled_members_in_two_domains_are_an_error() -> None:
    ns = nodes("a", "b")
    pods = [make_pod("m0").node("n0").obj(), make_pod("m1").node("n1").obj()]
    with pytest.raises(PlacementError, match="more than 1 domain found for pod group: a, b"):
        placement.generate(RACK, ns, pods)


def test_no_labelled_node_gives_no_placement() -> None:
    assert placement.generate(RACK, nodes(None), []) == []


def cand(name: str, placed: int, cpu: int = 0, mem: int = 0) -> Candidate:
    return Candidate(Placement(name, ()), placed, cpu, mem)


def test_most_members_placed_wins() -> None:
    assert placement.best([cand("a", 2), cand("b", 3)], 0).placement.name == "b"


def test_equal_scores_go_to_the_tightest_fit_then_the_name() -> None:
    assert placement.best([cand("a", 3, cpu=4000), cand("b", 3, cpu=1000)], 0).placement.name == "b"
    assert placement.best([cand("b", 3, 0, 5), cand("a", 3, 0, 5)], 0).placement.name == "a"


def test_scores_are_normalized_so_scheduled_members_count() -> None:
    # With 97 members already scheduled, 3 and 2 more normalize to 100 and 99: still ranked.
    assert placement.best([cand("a", 2), cand("b", 3)], 97).placement.name == "b"
