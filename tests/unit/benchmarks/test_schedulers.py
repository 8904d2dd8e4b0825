"""Both schedulers get the same configuration apart from their identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.schedulers import (
    SCHEDULER_NAMES,
    ClientLimits,
    Kind,
    SchedulerSetup,
    render_config,
)

SETUP = SchedulerSetup(ClientLimits(50, 100), percentage_of_nodes_to_score=20)


@pytest.mark.parametrize("kind", list(Kind), ids=[k.value for k in Kind])
def test_limits_and_sampling_are_the_same(kind: Kind) -> None:
    config = render_config(kind, SETUP, None)
    assert config["clientConnection"] == {"qps": 50, "burst": 100}
    assert config["percentageOfNodesToScore"] == 20
    assert config["leaderElection"] == {"leaderElect": False}
    assert config["profiles"][0]["schedulerName"] == SCHEDULER_NAMES[kind]
    if kind is not Kind.ASCHED_PLUGINS:
        assert config["profiles"] == [{"schedulerName": SCHEDULER_NAMES[kind]}]


def test_the_plugins_profile_adds_the_six_policies_and_fences_no_node() -> None:
    """The asched-plugins profile loads with the real config loader and the installed
    policies: the default plugins plus six, and RegionFence admits both regions."""
    import yaml

    from asched.app import build_registry
    from asched.config.loader import load_config
    from benchmarks.schedulers import REGIONS

    config = render_config(Kind.ASCHED_PLUGINS, SETUP, None)
    loaded = load_config(yaml.safe_dump(config), build_registry())
    filters = [r.name for r in loaded.profiles[0].plugins["filter"]]
    assert filters[-2:] == ["RegionFence", "GPUDriver"]
    assert "NodeResourcesFit" in filters
    scores = {r.name: r.weight for r in loaded.profiles[0].plugins["score"]}
    assert {"StrongestCPU", "CPUUtilization", "GPUResource", "Location"} <= set(scores)
    fence = loaded.profiles[0].plugin_args["RegionFence"]
    assert fence.default_regions == frozenset(REGIONS)


def test_kubeconfig_goes_into_client_connection() -> None:
    config = render_config(Kind.KUBE, SETUP, Path("/k/admin.kubeconfig"))
    assert config["clientConnection"]["kubeconfig"] == "/k/admin.kubeconfig"


def test_gang_profile_is_the_coscheduling_example_with_run_timings() -> None:
    setup = SchedulerSetup(
        ClientLimits(50, 100), gang=True, permit_waiting_seconds=7, podgroup_backoff_seconds=2
    )
    profile = render_config(Kind.ASCHED, setup, None)["profiles"][0]
    assert profile["schedulerName"] == SCHEDULER_NAMES[Kind.ASCHED]
    assert profile["plugins"]["queueSort"]["enabled"] == [{"name": "Coscheduling"}]
    args = next(e["args"] for e in profile["pluginConfig"] if e["name"] == "Coscheduling")
    assert (args["permitWaitingTimeSeconds"], args["podGroupBackoffSeconds"]) == (7, 2)


def test_kube_scheduler_has_no_gang_profile() -> None:
    with pytest.raises(ValueError, match="Coscheduling"):
        render_config(Kind.KUBE, SchedulerSetup(ClientLimits(50, 100), gang=True), None)


@pytest.mark.parametrize("kind", [Kind.ASCHED, Kind.KUBE], ids=["asched", "kube-scheduler"])
def test_list_spread_defaulting_goes_to_both(kind: Kind) -> None:
    """--spread-defaulting List: the same PodTopologySpread args for both schedulers, so
    both batch plain pods."""
    setup = SchedulerSetup(ClientLimits(50, 100), spread_defaulting="List")
    profile = render_config(kind, setup, None)["profiles"][0]
    assert profile["pluginConfig"] == [
        {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}
    ]


def test_a_workloads_gates_reach_both_schedulers_as_they_are(tmp_path: Path) -> None:
    """scheduler_perf's featureGates go to asched unfiltered, and asched's own flag parser
    accepts those of PreemptionBasic/1000Nodes and refuses PreemptionAsync/5000Nodes'."""
    from asched.base import featuregates
    from benchmarks.schedulers import SchedulerProcess

    def argv(kind: Kind, gates: dict[str, bool]) -> list[str]:
        setup = SchedulerSetup(ClientLimits(50, 100), feature_gates=gates)
        return SchedulerProcess(
            kind,
            setup,
            work_dir=tmp_path,
            admin_kubeconfig=tmp_path / "admin",
            scheduler_kubeconfig=tmp_path / "scheduler",
        ).argv()

    gates = {"SchedulerAsyncAPICalls": False, "GenericWorkload": True}
    asched = argv(Kind.ASCHED, gates)
    value = asched[asched.index("--feature-gates") + 1]
    assert value == "SchedulerAsyncAPICalls=false,GenericWorkload=true"
    assert featuregates.parse(value)["SchedulerAsyncAPICalls"] is False
    with pytest.raises(featuregates.FeatureGateError, match="SchedulerAsyncPreemption"):
        featuregates.parse("SchedulerAsyncPreemption=false")
    assert "--feature-gates" not in argv(Kind.ASCHED, {})
