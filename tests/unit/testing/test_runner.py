"""asched.testing.Runner: one cycle through the real Framework, reshaped per node and plugin."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from asched.api import Pod
from asched.framework import (
    Code,
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    NodeScore,
    PermitPlugin,
    PluginSpec,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
    ScoreNormalizer,
    ScorePlugin,
    Status,
)
from asched.framework.registry import DuplicatePluginError
from asched.framework.status import skip, unschedulable, wait
from asched.testing import Runner, enable, make_node, make_pod

NODES = [
    make_node("small").capacity(cpu="2").obj(),
    make_node("big").capacity(cpu="8").obj(),
    make_node("tainted").capacity(cpu="8").taint("dedicated", "gpu").obj(),
]


class Cores(ScorePlugin, ScoreNormalizer):
    """Scores a node by its CPU cores; normalizes so the strongest gets 100."""

    def __init__(self, args: object, handle: Handle) -> None:
        self.handle = handle

    @property
    def name(self) -> str:
        return "Cores"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return node_info.allocatable.milli_cpu // 1000

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        top = max(s.score for s in scores)
        for s in scores:
            s.score = s.score * 100 // top
        return None


CORES = PluginSpec("Cores", Cores)


class OnlyBig(PreFilterPlugin, FilterPlugin):
    """PreFilter narrows to `big` for pods labelled only=big, Skips for the others."""

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    @property
    def name(self) -> str:
        return "OnlyBig"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if pod.labels.get("only") == "big":
            return PreFilterResult(frozenset({"big"})), None
        if pod.labels.get("only") == "none":
            return None, unschedulable("no node is good enough")
        return None, skip()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Rejects every pod it is asked about but narrowed ones: a Skip must keep it silent.
        return None if pod.labels.get("only") == "big" else unschedulable("filter ran")


class Gate(ReservePlugin, PermitPlugin):
    def __init__(self, args: object, handle: Handle) -> None:
        self.reserved: list[str] = []

    @property
    def name(self) -> str:
        return "Gate"

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.reserved.append(node_name)
        return unschedulable("full") if node_name == "small" else None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.reserved.remove(node_name)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return wait(), 10.0


async def test_filter_statuses_name_the_rejecting_plugin() -> None:
    runner = Runner(["TaintToleration", "NodeResourcesFit"], nodes=NODES)
    result = await runner.schedule(make_pod("p").cpu("4").obj())
    assert result.feasible == ["big"]
    assert result.filter["tainted"].plugin == "TaintToleration"
    assert result.filter["tainted"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.filter["small"].plugin == "NodeResourcesFit"
    assert result.filter["small"].reasons == ("Insufficient cpu",)
    assert result.selected == "big"


async def test_scores_raw_normalized_weighted_and_totals() -> None:
    runner = Runner([enable(CORES, weight=3)], nodes=NODES)
    result = await runner.schedule(make_pod("p").obj())
    cores = result.scores["Cores"]
    assert cores.raw == {"small": 2, "big": 8, "tainted": 8}
    assert cores.normalized == {"small": 25, "big": 100, "tainted": 100}
    assert cores.weighted == {"small": 75, "big": 300, "tainted": 300}
    assert result.totals == cores.weighted
    assert result.best == ("big", "tainted")
    assert result.selected is None  # a tie: the scheduler would pick at random
    assert result.ranking()[-1] == "small"


async def test_pre_filter_narrowing_skip_and_rejection() -> None:
    runner = Runner([PluginSpec("OnlyBig", OnlyBig)], nodes=NODES)
    narrowed = await runner.schedule(make_pod("p").label("only", "big").obj())
    assert narrowed.feasible == ["big"]
    assert narrowed.filter["small"].reasons == ("node(s) didn't satisfy plugin(s) [OnlyBig]",)

    skipped = await runner.schedule(make_pod("p").obj())
    assert skipped.skipped_filters == {"OnlyBig"}
    assert skipped.feasible == ["small", "big", "tainted"]

    rejected = await runner.schedule(make_pod("p").label("only", "none").obj())
    assert rejected.pre_filter is not None
    assert rejected.pre_filter.plugin == "OnlyBig"
    assert set(rejected.rejected) == {"small", "big", "tainted"}
    assert rejected.selected is None


async def test_a_plugin_exception_is_an_error_status() -> None:
    def broken(args: object, handle: Handle) -> FilterPlugin:
        class Broken(FilterPlugin):
            name = "Broken"

            def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
                raise RuntimeError("bug")

        return Broken()

    runner = Runner([enable(broken, name="Broken", points=["filter"])], nodes=NODES)
    result = await runner.schedule(make_pod("p").obj())
    assert result.error is not None
    assert result.error.code == Code.ERROR
    assert result.filter == {"small": result.error}  # the pass stops at the first Error


async def test_args_go_through_validation_and_assumed_pods_count() -> None:
    runner = Runner(
        [enable("NodeResourcesFit", args={"scoringStrategy": {"type": "MostAllocated"}})],
        nodes=NODES[:2],
        pods=[make_pod("old").cpu("1").node("small").obj()],
    )
    first = await runner.schedule(make_pod("p").cpu("500m").obj())
    assert first.selected == "small"  # MostAllocated packs onto the busier node
    runner.assume(make_pod("q").cpu("1").obj(), "small")
    second = await runner.schedule(make_pod("r").cpu("500m").obj())
    assert second.filter["small"].reasons == ("Insufficient cpu",)


async def test_reserve_unreserve_and_permit() -> None:
    runner = Runner([PluginSpec("Gate", Gate), "NodeResourcesFit"], nodes=NODES[:2])
    result = await runner.schedule(make_pod("p").obj())
    gate = runner.plugin("Gate")
    assert isinstance(gate, Gate)
    failed = runner.reserve(result, "small")
    assert failed is not None
    assert failed.plugin == "Gate"
    assert gate.reserved == []  # a failed Reserve is undone
    assert runner.reserve(result, "big") is None
    permit = runner.permit(result, "big")
    assert permit is not None
    assert permit.code == Code.WAIT
    assert runner.framework.waiting_pods.get(result.pod.uid) is not None


def test_duplicate_plugin_names_are_an_error() -> None:
    with pytest.raises(DuplicatePluginError):
        Runner([CORES, CORES])


def test_a_factory_needs_a_name_and_its_points() -> None:
    with pytest.raises(ValueError, match="name="):
        enable(Cores)
    with pytest.raises(ValueError, match="points="):
        enable(CORES.new, name="Cores")  # a factory: no class to read the points from
