"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs: defaults and validation.

Mirrors kube-scheduler's v1 defaulting (SetDefaults_NodeResourcesFitArgs,
SetDefaults_NodeResourcesBalancedAllocationArgs) followed by validation
(ValidateNodeResourcesFitArgs, ValidateNodeResourcesBalancedAllocationArgs): the same
defaults, the same rules, the same messages, and the field path of the first problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from asched.framework.registry import ArgsError
from asched.framework.types import MAX_NODE_SCORE
from asched.plugins.helpers import (
    check_fields,
    field_path,
    label_name_error,
    read_int,
    read_list,
    read_mapping,
    read_str,
    read_str_list,
)

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SUPPORTED_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

# Shape scores are written on a 0-10 scale (config.MaxCustomPriorityScore) and scaled
# to the scheduler's 0-100 when the scorer is built.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
MAX_RESOURCE_WEIGHT = 100


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    utilization: int
    score: int


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def _parse_resources(raw: Mapping[str, Any], path: str) -> tuple[ResourceSpec, ...]:
    """`resources` with v1 defaulting: empty means cpu:1 memory:1; weight 0 or unset means 1."""
    items = read_list(raw, "resources", path)
    if not items:
        return DEFAULT_RESOURCES
    out: list[ResourceSpec] = []
    for i, item in enumerate(items):
        p = f"{field_path(path, 'resources')}[{i}]"
        check_fields(item, ("name", "weight"), p)
        name = read_str(item, "name", p)
        if not name:
            raise ArgsError(field_path(p, "name"), "Required value")
        weight = read_int(item, "weight", p, 0) or 1
        out.append(ResourceSpec(name, weight))
    return tuple(out)


def parse_shape(raw: Mapping[str, Any], path: str) -> tuple[UtilizationShapePoint, ...]:
    """validateFunctionShape: at least one point, increasing utilization, both in range."""
    items = read_list(raw, "shape", path)
    shape_path = field_path(path, "shape")
    if not items:
        raise ArgsError(shape_path, "Required value: at least one point must be specified")
    points: list[UtilizationShapePoint] = []
    for i, item in enumerate(items):
        p = f"{shape_path}[{i}]"
        check_fields(item, ("utilization", "score"), p)
        utilization = read_int(item, "utilization", p, 0)
        points.append(UtilizationShapePoint(utilization, read_int(item, "score", p, 0)))
    for i in range(1, len(points)):
        if points[i - 1].utilization >= points[i].utilization:
            raise ArgsError(
                f"{shape_path}[{i}].utilization",
                f"Invalid value: {points[i].utilization}: "
                "values must be sorted in increasing order",
            )
    for i, point in enumerate(points):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            raise ArgsError(
                f"{shape_path}[{i}].utilization",
                f"Invalid value: {point.utilization}: not in valid range [0, {MAX_UTILIZATION}]",
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ArgsError(
                f"{shape_path}[{i}].score",
                f"Invalid value: {point.score}: "
                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
            )
    return tuple(points)


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    # requestedToCapacityRatio.shape, on the config's 0-10 score scale; None unless
    # the type is RequestedToCapacityRatio.
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("type", "resources", "requestedToCapacityRatio"), path)
        kind = read_str(raw, "type", path)
        if kind not in SUPPORTED_STRATEGIES:
            supported = ", ".join(f'"{s}"' for s in SUPPORTED_STRATEGIES)
            raise ArgsError(
                field_path(path, "type"),
                f'Unsupported value: "{kind}": supported values: {supported}',
            )
        resources = _parse_resources(raw, path)
        for i, res in enumerate(resources):
            if not 0 < res.weight <= MAX_RESOURCE_WEIGHT:
                raise ArgsError(
                    f"{field_path(path, 'resources')}[{i}].weight",
                    f"Invalid value: {res.weight}: resource weight of {res.name} "
                    f"not in valid range (0, {MAX_RESOURCE_WEIGHT}]",
                )
        rtcr = read_mapping(raw, "requestedToCapacityRatio", path)
        rtcr_path = field_path(path, "requestedToCapacityRatio")
        shape: tuple[UtilizationShapePoint, ...] | None = None
        if kind == REQUESTED_TO_CAPACITY_RATIO:
            if rtcr is None:
                raise ArgsError(
                    rtcr_path,
                    "Required value: must be specified when type is RequestedToCapacityRatio",
                )
            check_fields(rtcr, ("shape",), rtcr_path)
            shape = parse_shape(rtcr, rtcr_path)
        elif rtcr is not None:
            raise ArgsError(
                rtcr_path, "Forbidden: must be nil when type is not RequestedToCapacityRatio"
            )
        return cls(kind, resources, shape)

    def scaled_shape(self) -> tuple[tuple[int, int], ...]:
        """(utilization, score) with scores scaled from 0-10 to the scheduler's 0-100."""
        factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        return tuple((p.utilization, p.score * factor) for p in self.shape or ())


@dataclass(frozen=True, slots=True)
class FitArgs:
    """NodeResourcesFitArgs."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"), path)
        ignored = read_str_list(raw, "ignoredResources", path)
        for i, res in enumerate(ignored):
            problem = label_name_error(res)
            if problem:
                raise ArgsError(
                    f"{field_path(path, 'ignoredResources')}[{i}]",
                    f'Invalid value: "{res}": {problem}',
                )
        groups = read_str_list(raw, "ignoredResourceGroups", path)
        for i, group in enumerate(groups):
            p = f"{field_path(path, 'ignoredResourceGroups')}[{i}]"
            if "/" in group:
                raise ArgsError(
                    p, f"Invalid value: \"{group}\": resource group name can't contain '/'"
                )
            problem = label_name_error(group)
            if problem:
                raise ArgsError(p, f'Invalid value: "{group}": {problem}')
        strategy_raw = read_mapping(raw, "scoringStrategy", path)
        strategy = (
            ScoringStrategy()
            if strategy_raw is None
            else ScoringStrategy.from_dict(strategy_raw, field_path(path, "scoringStrategy"))
        )
        return cls(ignored, groups, strategy)


@dataclass(frozen=True, slots=True)
class BalancedAllocationArgs:
    """NodeResourcesBalancedAllocationArgs."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("resources",), path)
        resources = _parse_resources(raw, path)
        seen: set[str] = set()
        for i, res in enumerate(resources):
            p = f"{field_path(path, 'resources')}[{i}]"
            if res.name in seen:
                raise ArgsError(field_path(p, "name"), f'Duplicate value: "{res.name}"')
            seen.add(res.name)
            if res.weight != 1:
                raise ArgsError(field_path(p, "weight"), f"Invalid value: {res.weight}: must be 1")
        return cls(resources)
