"""The pod group cycle's extension points as the runtime runs them (kube-scheduler
frameworkImpl RunPlacementGeneratePlugins, RunPlacementScorePlugins and
RunPodGroupPostFilterPlugins): order, which answer wins, and the Status codes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from asched.api import Pod
from asched.api.workload import NativePodGroup
from asched.framework import status as st
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgrouppoints import NO_FEASIBLE_PLACEMENTS, PodGroupPoints
from asched.framework.podgroups import (
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
)
from asched.framework.status import Code, Status
from tests.builders import make_node

INFO = PodGroupInfo(NativePodGroup("ns", "g", min_count=2))


class Answer:
    """A PodGroupPostFilter plugin that records its call and gives a fixed answer."""

    def __init__(
        self,
        name: str,
        status: Status | None,
        calls: list[str],
        nominated: Mapping[str, str] | None = None,
    ) -> None:
        self._name, self.status, self.calls = name, status, calls
        self.result = PodGroupPostFilterResult(nominated) if nominated is not None else None

    @property
    def name(self) -> str:
        return self._name

    async def pod_group_post_filter(
        self, group: Any
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        self.calls.append(self._name)
        if self.status is not None and self.status.code == Code.ERROR and self.status.error:
            raise self.status.error
        return self.result, self.status


class View:
    """The smallest PodGroupScheduling: the runner only passes it through."""

    info = INFO
    attempted = True
    state = CycleState()

    def nodes(self) -> Sequence[NodeInfo]:
        return []

    async def place(self, removed: Sequence[Pod]) -> tuple[PodGroupAssignments, Status | None]:
        raise AssertionError("not called by the runner")

    async def fits(self, assignments: Mapping[str, str], removed: Sequence[Pod]) -> bool:
        raise AssertionError("not called by the runner")


def points(**kw: Any) -> tuple[PodGroupPoints, list[tuple[str, Status | None]], list[str]]:
    timed: list[tuple[str, Status | None]] = []
    crashed: list[str] = []
    pts = PodGroupPoints(
        kw.get("generate", ()),
        kw.get("score", ()),
        kw.get("weights", {}),
        kw.get("post_filter", ()),
        crashed=lambda **where: crashed.append(where["plugin"]),
        timed=lambda point, status, start: timed.append((point, status)),
    )
    return pts, timed, crashed


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("answers", "called", "want", "nominated"),
    [
        pytest.param(
            [("A", st.unschedulable("a says no")), ("B", st.unschedulable("b says no"))],
            ["A", "B"],
            (U, "a says no, b says no", "A"),
            None,
            id="unschedulable-reasons-gathered-first-rejector-named",
        ),
        pytest.param(
            [("A", st.unschedulable()), ("B", Status(Code.SUCCESS, ("made room",)))],
            ["A", "B"],
            (Code.SUCCESS, "made room", ""),
            {"u1": "n1"},
            id="success-answers-with-its-nominations",
        ),
        pytest.param(
            [("A", None), ("B", st.unschedulable("never asked"))],
            ["A"],
            (Code.SUCCESS, "", ""),
            {"u1": "n1"},
            id="none-is-success-and-stops",
        ),
        pytest.param(
            [("A", st.unresolvable("hopeless")), ("B", None)],
            ["A"],
            (UU, "hopeless", "A"),
            {"u1": "n1"},  # passed along as Go does; the cycle uses it on Success only
            id="unresolvable-stops-tagged-with-the-plugin",
        ),
        pytest.param(
            [("A", st.error("broken")), ("B", None)],
            ["A"],
            (Code.ERROR, 'error in "A" PodGroupPostFilter plugins: broken', "A"),
            None,
            id="error-wrapped-as-go-does",
        ),
        pytest.param(
            [],
            [],
            (U, "", ""),
            None,
            id="no-plugin-is-unschedulable-without-reason",
        ),
    ],
)
async def test_pod_group_post_filter_order_and_codes(
    answers: list[tuple[str, Status | None]],
    called: list[str],
    want: tuple[Code, str, str],
    nominated: Mapping[str, str] | None,
) -> None:
    calls: list[str] = []
    plugins = [Answer(n, s, calls, {"u1": "n1"}) for n, s in answers]
    pts, timed, _ = points(post_filter=plugins)
    result, status = await pts.run_pod_group_post_filter(View())
    assert calls == called
    assert (status.code, status.message(), status.plugin) == want
    assert (dict(result.nominated) if result else None) == nominated
    assert timed == [("PodGroupPostFilter", status)]


async def test_a_raising_post_filter_is_an_error_naming_it() -> None:
    calls: list[str] = []
    boom = Answer("A", Status(Code.ERROR, ("x",), "", RuntimeError("kaput")), calls)
    pts, _, crashed = points(post_filter=[boom, Answer("B", None, calls)])
    _, status = await pts.run_pod_group_post_filter(View())
    assert (status.code, status.message()) == (
        Code.ERROR,
        'error in "A" PodGroupPostFilter plugins: kaput',
    )
    assert (calls, crashed) == (["A"], ["A"])


NODES = [NodeInfo(make_node(f"n{i}").obj()) for i in range(3)]


class Gen:
    name = "Gen"

    def __init__(self, placements: Sequence[Placement], status: Status | None = None) -> None:
        self.placements, self.status = placements, status

    def generate_placements(
        self, group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[Placement], Status | None]:
        return self.placements, self.status


def test_without_a_generate_plugin_every_node_is_one_placement() -> None:
    pts, _, _ = points()
    assert pts.run_placement_generate(INFO, NODES) == ([Placement("", (0, 1, 2))], None)


@pytest.mark.parametrize(
    ("gen", "want", "code", "message"),
    [
        pytest.param(Gen([Placement("a", (0,))]), [Placement("a", (0,))], None, "", id="ok"),
        pytest.param(Gen([]), [], U, NO_FEASIBLE_PLACEMENTS, id="none-is-unschedulable"),
        pytest.param(Gen([], st.error("bad domain")), [], Code.ERROR, "bad domain", id="error"),
    ],
)
def test_placement_generate(
    gen: Gen, want: list[Placement], code: Code | None, message: str
) -> None:
    pts, timed, _ = points(generate=[gen])
    placements, status = pts.run_placement_generate(INFO, NODES)
    assert placements == want
    assert (status.code if status else None, status.message() if status else "") == (
        code,
        message,
    )
    if status is not None:
        assert status.plugin == "Gen"
    assert [t[0] for t in timed] == ["PlacementGenerate"]


def test_two_generate_plugins_are_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="at most one placementGenerate plugin"):
        points(generate=[Gen([]), Gen([])])


class Count:
    """Scores a placement by how many members it places; normalizes by the highest."""

    name = "Count"

    def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        return len(assignments.assignments)

    def normalize_placement_score(
        self, group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None:
        top = max(s.score for s in scores)
        for s in scores:
            s.score = s.score * 100 // top
        return None


class Name:
    """Raw scores only: 10 for placement "b", else 0."""

    name = "Name"

    def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        return 10 if assignments.placement.name == "b" else 0


A = PodGroupAssignments(Placement("a", (0,)), {"u1": "n0", "u2": "n0"})
B = PodGroupAssignments(Placement("b", (1,)), {"u1": "n1"})


def test_placement_scores_are_normalized_weighted_and_summed() -> None:
    pts, timed, _ = points(score=[Count(), Name()], weights={"Count": 2})
    # Count: a=100, b=50, weight 2; Name: a=0, b=10, weight 1 (unset means 1).
    assert pts.run_placement_score(INFO, [A, B]) == ([200, 110], None)
    assert [t[0] for t in timed] == ["PlacementScore"]


def test_a_score_out_of_range_is_an_error() -> None:
    class Huge(Name):
        def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
            return 101

    pts, _, _ = points(score=[Huge()])
    totals, status = pts.run_placement_score(INFO, [A])
    assert totals == []
    assert status is not None
    assert status.code == Code.ERROR
    assert 'plugin "Name" returns an invalid score 101' in status.message()


def test_a_raising_score_plugin_is_an_error_naming_it() -> None:
    class Boom(Name):
        def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
            raise RuntimeError("kaput")

    pts, _, crashed = points(score=[Boom()])
    _, status = pts.run_placement_score(INFO, [A])
    assert status is not None
    assert status.message() == 'running PlacementScore plugins: plugin "Name" failed with: kaput'
    assert crashed == ["Name"]
