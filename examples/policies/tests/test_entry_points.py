"""The package as asched sees it: entry points, and a config that enables the policies.

Both need the package installed (hack/env.sh does `pip install -e examples/policies`; the
wheel test installs the built wheel). The end-to-end test, a real scheduler process
placing pods with RegionFence + StrongestCPU, needs the main repo's control-plane
fixtures and lives there: tests/integration/test_policies_e2e.py.
"""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest
from asched.app import build_registry
from asched.config import ConfigError, load_config
from asched.framework.registry import ENTRY_POINT_GROUP

import asched_policies
from asched_policies.gpu_resource import GPUResourceArgs
from asched_policies.location import LocationArgs
from asched_policies.region_fence import RegionFenceArgs

POLICIES = {"StrongestCPU", "RegionFence", "GPUDriver", "CPUUtilization", "GPUResource", "Location"}


# --- entry points ------------------------------------------------------------------


def test_entry_points_name_the_package_specs() -> None:
    ours = {
        ep.name: ep
        for ep in entry_points(group=ENTRY_POINT_GROUP)
        if ep.dist is not None and ep.dist.name == "asched-policies"
    }
    assert set(ours) == POLICIES
    assert {ep.name: ep.load() for ep in ours.values()} == {
        spec.name: spec for spec in asched_policies.SPECS
    }


def test_build_registry_includes_every_policy() -> None:
    registry = build_registry()
    assert set(registry.names()) >= POLICIES
    by_name = {spec.name: spec for spec in asched_policies.SPECS}
    for name in POLICIES:
        assert registry.get(name) is by_name[name]


# --- a KubeSchedulerConfiguration enabling them ------------------------------------

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: policies
    plugins:
      multiPoint:
        enabled:
          - name: RegionFence
          - name: GPUDriver
          - name: StrongestCPU
            weight: 10
          - name: CPUUtilization
          - name: GPUResource
          - name: Location
    pluginConfig:
      - name: RegionFence
        args:
          defaultRegions: [cn-north]
      - name: GPUResource
        args:
          strategy: LeastAllocated
"""


def test_config_enables_the_policies() -> None:
    profile = load_config(CONFIG, build_registry()).profile("policies")
    assert profile is not None
    for point in ("preFilter", "filter"):
        assert {"RegionFence", "GPUDriver"} <= set(profile.enabled(point))
    assert {"GPUResource", "Location"} <= set(profile.enabled("preScore"))
    weights = profile.score_weights()
    assert weights["StrongestCPU"] == 10
    assert {"CPUUtilization", "GPUResource", "Location"} <= set(weights)
    assert "RegionFence" not in weights
    args = profile.plugin_args
    assert args["RegionFence"] == RegionFenceArgs(default_regions=frozenset({"cn-north"}))
    assert args["GPUResource"] == GPUResourceArgs(strategy="LeastAllocated")
    assert args["Location"] == LocationArgs()  # defaulted: not in pluginConfig


@pytest.mark.parametrize(
    ("args", "path"),
    [
        pytest.param(
            "strategy: Spread", "profiles[0].pluginConfig[0].args.strategy", id="bad-value"
        ),
        pytest.param("typo: 1", "profiles[0].pluginConfig[0].args.typo", id="unknown-field"),
    ],
)
def test_config_reports_policy_args_errors_with_their_path(args: str, path: str) -> None:
    config = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: policies
    plugins:
      score:
        enabled: [{{name: GPUResource}}]
    pluginConfig:
      - name: GPUResource
        args: {{{args}}}
"""
    with pytest.raises(ConfigError) as err:
        load_config(config, build_registry())
    assert [p for p, _ in err.value.problems] == [path]
