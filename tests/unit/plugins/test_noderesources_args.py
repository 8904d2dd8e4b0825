"""NodeResourcesFitArgs / NodeResourcesBalancedAllocationArgs: v1 defaults and validation.

Cases follow kube-scheduler's validation_pluginargs_test.go; each error names its path.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.framework.registry import ArgsError
from asched.plugins.noderesources import (
    BalancedAllocationArgs,
    FitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)

P = "profiles[0].pluginConfig[0].args"
CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param({}, FitArgs((), (), ScoringStrategy("LeastAllocated", CPU_MEM)), id="empty"),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated"}},
            FitArgs(scoring_strategy=ScoringStrategy("MostAllocated", CPU_MEM)),
            id="resources-default-to-cpu-memory",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 0}, {"name": "example.com/gpu"}],
                }
            },
            FitArgs(
                scoring_strategy=ScoringStrategy(
                    "LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("example.com/gpu", 1))
                )
            ),
            id="weight-zero-or-unset-means-one",
        ),
        pytest.param(
            {"ignoredResources": ["example.com/foo"], "ignoredResourceGroups": ["example.com"]},
            FitArgs(("example.com/foo",), ("example.com",)),
            id="ignored",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                }
            },
            FitArgs(
                scoring_strategy=ScoringStrategy(
                    "RequestedToCapacityRatio",
                    CPU_MEM,
                    (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)),
                )
            ),
            id="requested-to-capacity-ratio",
        ),
    ],
)
def test_fit_args_valid(raw: dict[str, Any], want: FitArgs) -> None:
    assert FitArgs.from_dict(raw, P) == want


def test_shape_scores_scale_to_max_node_score() -> None:
    args = FitArgs.from_dict(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 30, "score": 3}]},
            }
        },
        P,
    )
    assert args.scoring_strategy.scaled_shape() == ((30, 30),)


S = f"{P}.scoringStrategy"


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        pytest.param({"foo": 1}, f"{P}.foo", "unknown field", id="unknown-field"),
        pytest.param(
            {"ignoredResources": ["example.com/aa/bb"]},
            f"{P}.ignoredResources[0]",
            "prefix part",
            id="ignored-resource-not-a-label-name",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/aa"]},
            f"{P}.ignoredResourceGroups[0]",
            "can't contain '/'",
            id="ignored-group-with-slash",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["-bad-"]},
            f"{P}.ignoredResourceGroups[0]",
            "name part",
            id="ignored-group-bad-name",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "Unknown"}},
            f"{S}.type",
            'Unsupported value: "Unknown"',
            id="unsupported-type",
        ),
        pytest.param(
            {"scoringStrategy": {"resources": []}},
            f"{S}.type",
            'Unsupported value: ""',
            id="missing-type",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 101}],
                }
            },
            f"{S}.resources[0].weight",
            "resource weight of cpu not in valid range (0, 100]",
            id="weight-too-large",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "memory", "weight": -1}],
                }
            },
            f"{S}.resources[0].weight",
            "not in valid range",
            id="weight-negative",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"weight": 1}]}},
            f"{S}.resources[0].name",
            "Required value",
            id="resource-without-name",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            f"{S}.requestedToCapacityRatio",
            "must be specified when type is",
            id="rtcr-without-shape-section",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": []},
                }
            },
            f"{S}.requestedToCapacityRatio.shape",
            "at least one point",
            id="rtcr-empty-shape",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]
                    },
                }
            },
            f"{S}.requestedToCapacityRatio.shape[1].utilization",
            "values must be sorted in increasing order",
            id="rtcr-unsorted",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
                }
            },
            f"{S}.requestedToCapacityRatio.shape[0].utilization",
            "not in valid range [0, 100]",
            id="rtcr-utilization-range",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
                }
            },
            f"{S}.requestedToCapacityRatio.shape[0].score",
            "not in valid range [0, 10]",
            id="rtcr-score-range",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "requestedToCapacityRatio": {"shape": []},
                }
            },
            f"{S}.requestedToCapacityRatio",
            "must be nil when type is not RequestedToCapacityRatio",
            id="shape-forbidden-for-other-types",
        ),
        pytest.param(
            {"scoringStrategy": "LeastAllocated"},
            f"{P}.scoringStrategy",
            "must be an object",
            id="strategy-not-an-object",
        ),
    ],
)
def test_fit_args_invalid(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as exc:
        FitArgs.from_dict(raw, P)
    assert exc.value.path == path
    assert message in exc.value.message


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param({}, CPU_MEM, id="default"),
        pytest.param(
            {"resources": [{"name": "cpu"}, {"name": "example.com/gpu", "weight": 1}]},
            (ResourceSpec("cpu", 1), ResourceSpec("example.com/gpu", 1)),
            id="custom",
        ),
    ],
)
def test_balanced_args_valid(raw: dict[str, Any], want: tuple[ResourceSpec, ...]) -> None:
    assert BalancedAllocationArgs.from_dict(raw, P).resources == want


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 2}]},
            f"{P}.resources[0].weight",
            "must be 1",
            id="weight-not-one",
        ),
        pytest.param(
            {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
            f"{P}.resources[1].name",
            'Duplicate value: "cpu"',
            id="duplicate",
        ),
        pytest.param({"shape": []}, f"{P}.shape", "unknown field", id="unknown-field"),
    ],
)
def test_balanced_args_invalid(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as exc:
        BalancedAllocationArgs.from_dict(raw, P)
    assert (exc.value.path, message in exc.value.message) == (path, True)
