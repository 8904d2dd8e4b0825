"""The dry scheduling cycle with kube-scheduler's default plugins, on builder objects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from asched.api import Node, Pod
from asched.app import scheduler_options
from asched.config import default_config
from asched.explain.dryrun import dry_run
from asched.explain.model import Explanation
from asched.explain.runner import profile_for
from asched.explain.services import ExplainServices
from asched.explain.view import build_snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec, Registry
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Code, Status, unschedulable
from asched.plugins.registry import in_tree_registry
from tests.builders import make_node, make_pod
from tests.unit.explain.fakes import FakeKube

AFFINITY = "node(s) didn't match Pod's node affinity/selector"


async def explain(
    pod: Pod,
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    registry: Registry | None = None,
    profile: ProfileSpec | None = None,
) -> Explanation:
    registry = registry or in_tree_registry()
    if profile is None:
        options = scheduler_options(default_config(registry))
        profile = profile_for(options.profiles, pod.scheduler_name)
    snapshot = build_snapshot(nodes, pods)
    services = ExplainServices(FakeKube(), snapshot, [*pods, pod])
    fwk = Framework(profile, registry, services)
    return await dry_run(fwk, pod, snapshot.node_infos())


def verdicts(out: Explanation) -> dict[str, tuple[str, str]]:
    return {n.node: (n.verdict.plugin, n.verdict.message) for n in out.nodes}


@dataclass
class Case:
    id: str
    pod: Pod
    nodes: list[Node]
    # node -> (first rejecting plugin, reason); "" plugin means feasible
    want: dict[str, tuple[str, str]]
    others: list[Pod] = field(default_factory=list)
    # node -> plugins that also reject it after the first
    also: dict[str, list[str]] = field(default_factory=dict)
    fit_error: str = ""


CASES = [
    Case(
        "affinity-on-some-nodes-fit-on-others",
        make_pod("p").cpu("4").node_selector({"zone": "a"}).obj(),
        [
            make_node("a1").capacity(cpu="2").label("zone", "a").obj(),
            make_node("a2").capacity(cpu="2").label("zone", "a").obj(),
            make_node("b1").capacity(cpu="16").label("zone", "b").obj(),
            make_node("c1").capacity(cpu="1").label("zone", "c").obj(),
        ],
        want={
            "a1": ("NodeResourcesFit", "Insufficient cpu"),
            "a2": ("NodeResourcesFit", "Insufficient cpu"),
            "b1": ("NodeAffinity", AFFINITY),
            "c1": ("NodeAffinity", AFFINITY),
        },
        also={"c1": ["NodeResourcesFit"], "b1": [], "a1": []},
        fit_error=f"0/4 nodes are available: 2 Insufficient cpu, 2 {AFFINITY}.",
    ),
    Case(
        "taint-rejects-one-node",
        make_pod("p").cpu("1").obj(),
        [
            make_node("infra").taint("dedicated", "infra").obj(),
            make_node("n1").obj(),
        ],
        want={
            "infra": ("TaintToleration", "node(s) had untolerated taint(s)"),
            "n1": ("", ""),
        },
    ),
    Case(
        "existing-pods-use-the-room",
        make_pod("p").cpu("3").obj(),
        [make_node("full").capacity(cpu="4").obj(), make_node("free").capacity(cpu="4").obj()],
        want={"full": ("NodeResourcesFit", "Insufficient cpu"), "free": ("", "")},
        others=[make_pod("busy").cpu("2").node("full").obj()],
    ),
    Case(
        "nominated-pod-of-higher-priority-reserves-the-room",
        make_pod("p").cpu("3").obj(),
        [make_node("n1").capacity(cpu="4").obj(), make_node("n2").capacity(cpu="4").obj()],
        want={"n1": ("NodeResourcesFit", "Insufficient cpu"), "n2": ("", "")},
        others=[make_pod("vip").cpu("2").priority(100).nominated("n1").obj()],
    ),
    Case(
        "nominated-pod-of-lower-priority-does-not-count",
        make_pod("p").cpu("3").priority(100).obj(),
        [make_node("n1").capacity(cpu="4").obj()],
        want={"n1": ("", "")},
        others=[make_pod("low").cpu("2").nominated("n1").obj()],
    ),
    Case(
        "prefilter-narrowing-by-node-name-field",
        make_pod("p")
        .affinity(
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                                ]
                            }
                        ]
                    }
                }
            }
        )
        .obj(),
        [make_node("n1").obj(), make_node("n2").obj()],
        want={
            "n1": ("", ""),
            "n2": ("NodeAffinity", "node(s) didn't satisfy plugin(s) [NodeAffinity]"),
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_filter_verdicts(case: Case) -> None:
    out = await explain(case.pod, case.nodes, case.others)
    got = verdicts(out)
    for node, (plugin, reason) in case.want.items():
        assert got[node][0] == plugin, node
        assert reason in got[node][1], node
    by_node = {n.node: n for n in out.nodes}
    for node, plugins in case.also.items():
        first = by_node[node].verdict.plugin
        assert [
            c.plugin for c in by_node[node].checks if not c.ok and c.plugin != first
        ] == plugins, node
    assert out.fit_error == case.fit_error
    assert out.feasible == [n for n, (p, _) in case.want.items() if not p]


async def test_scores_are_raw_normalized_weighted_and_pick_the_best() -> None:
    pod = make_pod("p").cpu("1").memory("1Gi").obj()
    nodes = [
        make_node("small").capacity(cpu="4", memory="8Gi").obj(),
        make_node("big").capacity(cpu="32", memory="64Gi").obj(),
    ]
    out = await explain(pod, nodes)
    assert out.selected == "big"
    assert out.best == ("big",)
    assert [s.node for s in out.scores] == ["big", "small"]
    assert out.score_weights["TaintToleration"] == 3
    for row in out.scores:
        assert row.total == sum(s.weighted for s in row.plugins.values())
        for name, s in row.plugins.items():
            assert s.weighted == s.normalized * out.score_weights[name], name
    fit = {s.node: s.plugins["NodeResourcesFit"] for s in out.scores}
    assert fit["big"].raw > fit["small"].raw
    assert out.fit_error == ""


async def test_ties_name_every_best_node_and_pick_none() -> None:
    out = await explain(make_pod("p").obj(), [make_node("n1").obj(), make_node("n2").obj()])
    assert out.selected == ""
    assert out.best == ("n1", "n2")
    assert any("at random" in n for n in out.notes)


async def test_one_feasible_node_is_noted() -> None:
    out = await explain(make_pod("p").obj(), [make_node("n1").obj()])
    assert out.selected == "n1"
    assert any("without scoring" in n for n in out.notes)


async def test_a_nominated_node_that_fits_is_taken_first() -> None:
    nodes = [make_node("small").capacity(cpu="4").obj(), make_node("big").capacity(cpu="32").obj()]
    out = await explain(make_pod("p").cpu("1").nominated("small").obj(), nodes)
    assert out.best == ("big",)  # the scores alone would pick big
    assert out.selected == "small"
    assert any("nominated to small" in n for n in out.notes)


async def test_scheduling_gate_is_reported_and_the_cycle_still_runs() -> None:
    out = await explain(make_pod("p").gate("wait-for-quota").obj(), [make_node("n1").obj()])
    assert out.gate is not None
    assert out.gate.plugin == "SchedulingGates"
    assert "wait-for-quota" in out.gate.message
    assert out.feasible == ["n1"]


async def test_prefilter_rejection_applies_to_every_node() -> None:
    # A pod whose claim does not exist is rejected at PreFilter (VolumeRestrictions runs
    # before VolumeBinding in the default order, as in kube-scheduler).
    pod = make_pod("p").pvc("data").obj()
    out = await explain(pod, [make_node("n1").obj(), make_node("n2").obj()])
    assert out.pre_filter is not None
    assert out.pre_filter.plugin == "VolumeRestrictions"
    assert out.pre_filter.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert {n.verdict for n in out.nodes} == {out.pre_filter}
    assert out.fit_error.startswith("0/2 nodes are available: ")
    assert 'persistentvolumeclaim "data" not found' in out.fit_error
    assert out.scores == []


async def test_no_nodes() -> None:
    out = await explain(make_pod("p").obj(), [])
    assert out.nodes == []
    assert out.fit_error == "no nodes available to schedule pods"


class _Sort:
    name = "Sort"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def less(self, a: Any, b: Any) -> bool:
        return False


class _Boom:
    """Raises on nodes named boom*, rejects nodes named no*."""

    name = "Boom"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name.startswith("boom"):
            raise RuntimeError("kaboom")
        if node_info.name.startswith("no"):
            return unschedulable("says no")
        return None


async def test_a_plugin_exception_is_an_error_verdict_with_its_name() -> None:
    reg = Registry()
    reg.register(PluginSpec("Sort", _Sort))
    reg.register(PluginSpec("Boom", _Boom))
    profile = ProfileSpec("p", {"queueSort": [("Sort", 0)], "filter": [("Boom", 0)]}, {})
    out = await explain(
        make_pod("p").obj(),
        [make_node("boom1").obj(), make_node("no1").obj(), make_node("ok").obj()],
        registry=reg,
        profile=profile,
    )
    got = {n.node: n.verdict for n in out.nodes}
    assert got["boom1"].code == Code.ERROR
    assert got["boom1"].plugin == "Boom"
    assert got["boom1"].message == 'running "Boom" filter plugin: kaboom'
    assert got["no1"].code == Code.UNSCHEDULABLE
    assert out.selected == "ok"
    # No Score plugins: every feasible node scores 1 (kube-scheduler).
    assert [s.total for s in out.scores] == [1]
    assert any("Error" in n for n in out.notes)
