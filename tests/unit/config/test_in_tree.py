"""The sample files against the real in-tree registry (asched.plugins.registry)."""

from __future__ import annotations

from pathlib import Path

from asched.config import default_config, load_config
from asched.plugins import registry as registry_module
from tests.unit.config.test_plugin_sets import DEFAULT_FILTER

CONFIGS = Path(__file__).parents[2] / "data" / "configs"


def test_defaults_with_the_real_registry_are_kube_schedulers() -> None:
    config = default_config(registry_module.in_tree_registry())
    assert config.warnings == ()  # every default plugin is registered
    [profile] = config.profiles
    assert profile.enabled("queueSort") == ("PrioritySort",)
    assert profile.enabled("filter") == DEFAULT_FILTER
    # applyDynamicResources puts DynamicResources right before DefaultPreemption.
    assert profile.enabled("postFilter") == ("DynamicResources", "DefaultPreemption")
    assert profile.enabled("bind") == ("DefaultBinder",)
    assert profile.enabled("preEnqueue")[0] == "SchedulingGates"
    weights = profile.score_weights()
    assert {
        name: weights[name]
        for name in ("TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity")
    } == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
    }


def test_seed_file_with_the_real_registry() -> None:
    config = load_config(
        CONFIGS / "seed-node-affinity-plugin.yaml", registry_module.in_tree_registry()
    )
    assert len(config.warnings) == 4
    [profile] = config.profiles
    assert profile.scheduler_name == "custom-scheduler"
    assert profile.enabled("filter")[0] == "NodeAffinity"
    assert sorted(profile.enabled("filter")) == sorted(DEFAULT_FILTER)
    args = profile.plugin_args["NodeAffinity"]
    assert (args.label_key, args.label_value) == ("node-type", "gpu")


def test_full_v1_file_with_the_real_registry() -> None:
    config = load_config(CONFIGS / "full-v1.yaml", registry_module.in_tree_registry())
    assert config.warnings == ()
    default, spread = config.profiles
    assert default.score_weights()["NodeResourcesFit"] == 5
    assert "MostAllocated" in repr(default.plugin_args["NodeResourcesFit"])
    assert tuple(spread.plugins["score"]) == (("PodTopologySpread", 10),)
