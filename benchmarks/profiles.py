"""Plugin profiles for the in-process cycle benchmark (benchmarks/cycle.py).

- default: kube-scheduler's default profile;
- batchable: the default with PodTopologySpread's system defaults off, so alike pods are
  signable and opportunistic batching acts;
- policies: the default plus the six policies of examples/policies with the settings of
  the side-by-side `plugins` scenario (schedulers.policies_profile): what a user who
  adds the seed's policies runs;
- per-node: the default plus a Filter and a Score written the simplest way a new user
  would - per-node methods only, no batch form, no memo, no signing - to price that path.
"""

from __future__ import annotations

from typing import Any

from asched.api import Pod
from asched.config.loader import load_config
from asched.framework import CycleState, FilterPlugin, NodeInfo, PluginSpec, ScorePlugin, Status
from asched.framework.points import ExtensionPoint as EP
from asched.framework.registry import Registry
from asched.framework.runtime import ProfileSpec
from asched.framework.status import Code
from asched.plugins.registry import in_tree_registry
from asched.testing.profiles import default_profile
from benchmarks.schedulers import REGION_LABEL, REGIONS, policies_profile

PROFILES = ("default", "batchable", "policies", "per-node")


class RegionCheck(FilterPlugin):
    """A per-node Filter: the node's region label must be a known region."""

    def __init__(self, _args: Any = None, _handle: Any = None) -> None:
        self._allowed = frozenset(REGIONS)
        self._reject = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("unknown region",))

    @property
    def name(self) -> str:
        return "RegionCheck"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or node.labels.get(REGION_LABEL) not in self._allowed:
            return self._reject
        return None


class CoresScore(ScorePlugin):
    """A per-node Score: more allocatable cores score higher, in [0, 100]."""

    def __init__(self, _args: Any = None, _handle: Any = None) -> None:
        return None

    @property
    def name(self) -> str:
        return "CoresScore"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return min(100, node_info.allocatable.milli_cpu // 1000)


PER_NODE_SPECS = (PluginSpec("RegionCheck", RegionCheck), PluginSpec("CoresScore", CoresScore))


def build(profile: str) -> tuple[ProfileSpec, Registry]:
    """The ProfileSpec and registry of `profile` (one of PROFILES)."""
    if profile in ("default", "batchable"):
        return default_profile(batchable=profile == "batchable")
    if profile == "per-node":
        spec, registry = default_profile()
        plugins = {point: list(refs) for point, refs in spec.plugins.items()}
        for s in PER_NODE_SPECS:
            registry.register(s)
        plugins[EP.FILTER].append(("RegionCheck", 0))
        plugins[EP.SCORE].append(("CoresScore", 1))
        return ProfileSpec(spec.scheduler_name, plugins, spec.plugin_args), registry
    if profile == "policies":
        import yaml

        registry = in_tree_registry()
        registry.load_entry_points()  # asched-policies, as `asched run` finds it
        document = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", **policies_profile()}],
        }
        p = load_config(yaml.safe_dump(document), registry).profiles[0]
        spec = ProfileSpec(
            p.scheduler_name,
            {point: [(r.name, r.weight) for r in refs] for point, refs in p.plugins.items()},
            dict(p.plugin_args),
        )
        return spec, registry
    raise ValueError(f"unknown profile {profile!r}; choose from {PROFILES}")
