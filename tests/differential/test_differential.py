"""asched against kube-scheduler v1.37.2, scenario by scenario, on one real cluster.

The module fixture runs every scenario of scenarios/*.yaml through asched once and
through kube-scheduler twice (see harness.py); each test then judges one scenario:
a scenario whose two reference runs disagree is skipped with the disagreement as the
reason; otherwise kube-scheduler must do what the scenario claims, and asched must do
what kube-scheduler did, except for a difference documented in docs/differential.md,
which the test then asserts is exactly as documented. Only the scenarios the session
selected (`-k`) are run. When asched's side was not run (ASCHED_DIFF_SIDES, harness.py)
the test checks the reference and then skips, with the reason.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from asched.localcluster import LocalCluster
from tests.differential.compare import (
    differences,
    known_difference_problems,
    reference_problems,
)
from tests.differential.harness import Results, as_judged, run_differential
from tests.differential.scenario import Scenario, load_scenarios

SCENARIOS = load_scenarios()

#: kube-scheduler's default plugins whose behaviour a scenario can show on kwok nodes
#: (DefaultBinder binds every scheduled pod).
COVERED_PLUGINS = (
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "VolumeBinding",
    "VolumeZone",
    "NodeVolumeLimits",
    "PodTopologySpread",
    "InterPodAffinity",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    # Slices published by the scenarios themselves (no driver): dra.yaml.
    "DynamicResources",
)


def _selected(request: pytest.FixtureRequest) -> list[Scenario]:
    """The scenarios of the session's test_scenario items (all of them without -k)."""
    ids: set[str] = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if getattr(item, "originalname", "") == "test_scenario" and callspec is not None:
            ids.add(callspec.params["scenario"].id)
    return [s for s in SCENARIOS if s.id in ids] or SCENARIOS


@pytest.fixture(scope="module")
def results(
    cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Results:
    work_dir: Path = tmp_path_factory.mktemp("differential")
    scenarios = _selected(request)
    outcome = anyio.run(run_differential, cluster, scenarios, work_dir)
    unstable = sorted(i for i, r in outcome.by_id.items() if r.unstable)
    print(
        f"\ndifferential: {len(scenarios)} scenarios on {outcome.nodes} nodes, asched once "
        f"and kube-scheduler twice, in {outcome.seconds:.1f}s (logs in {work_dir}); "
        f"unstable reference: {unstable or 'none'}"
    )
    return outcome


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(scenario: Scenario, results: Results) -> None:
    result = results.by_id[scenario.id]
    scenario = as_judged(scenario, idle=result.idle)
    if result.unstable:
        # The reference gave two answers: there is no one answer to hold asched to.
        pytest.skip("kube-scheduler's answer is unstable: " + "; ".join(result.unstable))
    problems = [f"reference: {p}" for p in reference_problems(scenario, result.kube)]
    if result.asched is None:
        assert not problems, f"{scenario.description}\n" + "\n".join(problems)
        pytest.skip(result.asched_skipped)
    found = differences(scenario, result.asched, result.kube)
    if scenario.known_difference is None:
        problems += [str(m) for m in found]
    else:
        problems += known_difference_problems(scenario, result.asched, result.kube, found)
    assert not problems, f"{scenario.description}\n" + "\n".join(problems)


def test_scenarios_cover_every_default_plugin_alone_and_combined() -> None:
    assert len(SCENARIOS) >= 40
    alone = {s.plugins[0] for s in SCENARIOS if len(s.plugins) == 1}
    missing = [p for p in COVERED_PLUGINS if p not in alone]
    assert not missing, f"no scenario for these plugins alone: {missing}"
    combined = [s.id for s in SCENARIOS if len(s.plugins) >= 2]
    assert len(combined) >= 5, combined
