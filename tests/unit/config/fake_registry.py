"""A Registry of small fake plugins with the in-tree names, for config tests.

The fakes implement the same extension points as kube-scheduler's in-tree plugins (that is
all multiPoint expansion looks at), and a few have Args types shaped like the real ones, so
merge rules, defaulting and args errors are tested without asched.plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from asched.framework.registry import POINT_METHODS, ArgsError, PluginSpec, Registry


def _reject_unknown(raw: Mapping[str, Any], known: set[str], path: str) -> None:
    for key in raw:
        if key not in known:
            raise ArgsError(f"{path}.{key}", "unknown field")


def _int_in(
    raw: Mapping[str, Any], key: str, default: int, bounds: tuple[int, int], path: str
) -> int:
    low, high = bounds
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgsError(f"{path}.{key}", "must be an integer")
    if not low <= value <= high:
        raise ArgsError(f"{path}.{key}", f"must be in [{low}, {high}]")
    return value


@dataclass(frozen=True)
class ResourceSpec:
    name: str
    weight: int = 1


@dataclass(frozen=True)
class ScoringStrategy:
    type: str = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu"), ResourceSpec("memory"))


@dataclass(frozen=True)
class FitArgs:
    ignored_resources: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        _reject_unknown(raw, {"ignoredResources", "scoringStrategy"}, path)
        strategy = ScoringStrategy()
        raw_strategy = raw.get("scoringStrategy")
        if raw_strategy is not None:
            sp = f"{path}.scoringStrategy"
            _reject_unknown(raw_strategy, {"type", "resources"}, sp)
            kind = raw_strategy.get("type", "LeastAllocated")
            if kind not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
                raise ArgsError(f"{sp}.type", f'unsupported value "{kind}"')
            resources = (
                tuple(
                    ResourceSpec(
                        r["name"], _int_in(r, "weight", 1, (1, 100), f"{sp}.resources[{i}]")
                    )
                    for i, r in enumerate(raw_strategy.get("resources") or ())
                )
                or ScoringStrategy().resources
            )
            strategy = ScoringStrategy(kind, resources)
        return cls(tuple(raw.get("ignoredResources") or ()), strategy)


@dataclass(frozen=True)
class NodeAffinityArgs:
    added_affinity: Mapping[str, Any] | None = None
    label_key: str = ""
    label_value: str = ""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        _reject_unknown(raw, {"addedAffinity", "labelKey", "labelValue"}, path)
        return cls(raw.get("addedAffinity"), raw.get("labelKey", ""), raw.get("labelValue", ""))


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        _reject_unknown(raw, {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}, path)
        return cls(_int_in(raw, "hardPodAffinityWeight", 1, (0, 100), path))


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        _reject_unknown(raw, {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"}, path)
        return cls(
            _int_in(raw, "minCandidateNodesPercentage", 10, (0, 100), path),
            _int_in(raw, "minCandidateNodesAbsolute", 100, (0, 2**31 - 1), path),
        )


@dataclass(frozen=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = 60

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        _reject_unknown(raw, {"permitWaitingTimeSeconds"}, path)
        return cls(_int_in(raw, "permitWaitingTimeSeconds", 60, (1, 3600), path))


def _stub(self: Any, *args: Any) -> None:
    return None


def fake_spec(name: str, points: set[str], args_type: type | None = None) -> PluginSpec:
    """A plugin class named `name` defining exactly the methods of `points`."""
    unknown = points - set(POINT_METHODS)
    assert not unknown, unknown
    methods: dict[str, Any] = {POINT_METHODS[p]: _stub for p in points}
    if "reserve" in points:
        methods["unreserve"] = _stub
    plugin_type = type(name, (), methods)
    return PluginSpec(name, plugin_type, args_type)


# The in-tree plugins' names and the extension points kube-scheduler's versions implement.
IN_TREE_POINTS: dict[str, set[str]] = {
    "SchedulingGates": {"preEnqueue"},
    "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"},
    "NodeName": {"filter"},
    "TaintToleration": {"filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeBinding": {"preFilter", "filter", "reserve", "preBind"},
    "VolumeZone": {"preFilter", "filter"},
    "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
    "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
    # asched's points: kube-scheduler's also has postFilter, and no preScore (see the
    # plugin's docstring).
    "DynamicResources": {
        "preEnqueue",
        "preFilter",
        "filter",
        "preScore",
        "score",
        "reserve",
        "preBind",
        "podGroupPostFilter",
    },
    "DefaultPreemption": {"postFilter", "podGroupPostFilter"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
    "NodeDeclaredFeatures": {"preFilter", "filter"},
    "GangScheduling": {"preEnqueue", "permit"},
    "TopologyPlacementGenerator": {"placementGenerate"},
    "PodGroupPodsCount": {"placementScore"},
}
ARGS_TYPES: dict[str, type] = {
    "NodeResourcesFit": FitArgs,
    "NodeAffinity": NodeAffinityArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
}
# Out-of-tree style plugins the tests enable by hand.
CUSTOM_POINTS: dict[str, set[str]] = {
    "Custom": {"filter", "score"},
    "CustomSort": {"queueSort"},
    "CustomBinder": {"bind"},
    "Coscheduling": {
        "preEnqueue",
        "queueSort",
        "preFilter",
        "postFilter",
        "permit",
        "reserve",
        "postBind",
    },
}


def fake_registry(*, without: tuple[str, ...] = ()) -> Registry:
    registry = Registry()
    for name, points in IN_TREE_POINTS.items():
        if name not in without:
            registry.register(fake_spec(name, points, ARGS_TYPES.get(name)))
    for name, points in CUSTOM_POINTS.items():
        registry.register(
            fake_spec(name, points, CoschedulingArgs if name == "Coscheduling" else None)
        )
    return registry


# Reachable as "tests.unit.config.fake_registry:GANG" - a `module:attr` plugin name.
GANG = fake_spec("Gang", {"permit", "reserve"})
