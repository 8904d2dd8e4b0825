"""TopologyPlacementGenerator: one placement per topology domain, pinned by the members
already scheduled (Go's TopologyPlacement.GeneratePlacements)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.backend.snapshot import Snapshot
from asched.framework.columns import NodeRows
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement, PodGroupInfo
from asched.framework.status import Code
from asched.plugins.topologyplacement import TopologyPlacementGenerator
from asched.scheduler.placement import leftover
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


# The column path (a NodeRows: the snapshot's node list, or a composite parent placement's
# subset of it) must give exactly the placements the loop over a plain list gives; the
# subset case checks that positions, not the columns' rows, are what a Placement indexes.
_racks = st.lists(st.sampled_from(["r0", "r1", "r2", "r10", None]), min_size=1, max_size=24)


@given(racks=_racks, data=st.data())
@settings(max_examples=150, deadline=None)
def test_the_column_path_places_like_the_loop(racks: list[str | None], data: st.DataObject) -> None:
    infos = nodes(*racks)
    snapshot = Snapshot(infos)
    full = snapshot.node_infos()
    assert isinstance(full, NodeRows)
    picked = data.draw(
        st.lists(st.integers(0, len(infos) - 1), unique=True).map(sorted), label="subset"
    )
    rows = np.asarray(picked, dtype=np.int64)
    subset = NodeRows(snapshot.columns.infos_at(rows), snapshot.columns, rows)
    labelled = [i for i, r in enumerate(racks) if r is not None]
    pinned = data.draw(st.lists(st.sampled_from(labelled), max_size=2) if labelled else st.just([]))
    scheduled = [make_pod(f"m{j}").node(f"n{i}").obj() for j, i in enumerate(pinned)]
    for columnar in (full, subset):
        by_loop = generate(RACK, list(columnar), scheduled)
        by_columns = generate(RACK, columnar, scheduled)
        assert by_columns == by_loop
        for p in by_columns[0]:
            got = p.nodes(columnar)
            want = p.nodes(list(columnar))
            assert [ni.name for ni in got] == [ni.name for ni in want]
            assert isinstance(got, NodeRows)
            # Score reads the columns at `rows`: they must be the picked nodes' rows.
            assert [ni.name for ni in got.columns.infos_at(got.rows)] == [ni.name for ni in want]
            assert leftover(p, columnar) == leftover(p, list(columnar))
