"""PodGroupPodsCount: scheduled members plus the ones a placement places, normalized by
the highest (Go's podgrouppodscount)."""

from __future__ import annotations

from asched.api.workload import NativePodGroup
from asched.framework.podgroups import (
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
)
from asched.framework.status import Code
from asched.plugins.podgrouppodscount import PodGroupPodsCount
from asched.plugins.podgrouppodscount.podgroup_pods_count import NOTHING_ASSIGNED
from tests.builders import make_pod

PLUGIN = PodGroupPodsCount(None, None)  # type: ignore[arg-type]


def info(scheduled: int) -> PodGroupInfo:
    pods = tuple(make_pod(f"s{i}").node("n0").obj() for i in range(scheduled))
    return PodGroupInfo(NativePodGroup("ns", "g", min_count=2), pods)


def test_scheduled_members_count_with_the_placed_ones() -> None:
    got = PLUGIN.score_placement(info(2), PodGroupAssignments(Placement("a", ()), {"u1": "n1"}))
    assert got == 3


def test_normalized_by_the_highest_so_close_counts_stay_close() -> None:
    # With 97 members already scheduled, 3 and 2 more normalize to 100 and 99: still ranked.
    scores = [PlacementScore(Placement("a", ()), 99), PlacementScore(Placement("b", ()), 100)]
    assert PLUGIN.normalize_placement_score(info(97), scores) is None
    assert [s.score for s in scores] == [99, 100]


def test_nothing_placed_anywhere_is_an_error() -> None:
    st = PLUGIN.normalize_placement_score(info(0), [PlacementScore(Placement("a", ()), 0)])
    assert st is not None
    assert (st.code, st.message()) == (Code.ERROR, NOTHING_ASSIGNED)
