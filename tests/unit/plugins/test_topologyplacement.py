"""TopologyPlacementGenerator: one placement per topology domain, pinned by the members
already scheduled (Go's TopologyPlacement.GeneratePlacements)."""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement, PodGroupInfo
from asched.framework.status import Code
from asched.plugins.topologyplacement import TopologyPlacementGenerator
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


def generate(
    key: str, all_nodes: Sequence[NodeInfo], scheduled: Sequence[Pod] = ()
) -> tuple[Sequence[Placement], str, Code]:
    group = PodGroupInfo(NativePodGroup("ns", "g", topology_key=key), tuple(scheduled))
    placements, st = TopologyPlacementGenerator(None, None).generate_placements(  # type: ignore[arg-type]
        group, all_nodes
    )
    return placements, st.message() if st else "", st.code if st else Code.SUCCESS


def test_no_constraint_is_one_placement_of_every_node() -> None:
    assert generate("", nodes("a", None)) == ([Placement("", (0, 1))], "", Code.SUCCESS)


def test_one_placement_per_domain_in_name_order_without_unlabelled_nodes() -> None:
    got, _, _ = generate(RACK, nodes("b", "a", None, "b"))
    assert got == [Placement("a", (1,)), Placement("b", (0, 3))]


def test_scheduled_members_pin_their_domain() -> None:
    got, _, _ = generate(RACK, nodes("a", "b", "b"), [make_pod("m").node("n1").obj()])
    assert got == [Placement("b", (1, 2))]


def test_scheduled_members_in_two_domains_are_an_error() -> None:
    pods = [make_pod("m0").node("n0").obj(), make_pod("m1").node("n1").obj()]
    got, message, code = generate(RACK, nodes("a", "b"), pods)
    assert (got, code) == ([], Code.ERROR)
    assert message == (
        "cannot determine domain for already scheduled pods: "
        "more than 1 domain found for pod group: a, b"
    )


def test_no_labelled_node_gives_no_placement() -> None:
    assert generate(RACK, nodes(None)) == ([], "", Code.SUCCESS)
