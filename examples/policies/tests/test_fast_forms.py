"""Every policy's fast form (batch or memoized) gives exactly its per-node answers.

`asched.testing.check_fast_forms` schedules generated pods on generated clusters twice -
as asched runs the profile (columns, batch forms, memos) and node by node - and compares
every status and score. The values below include the malformed ones each policy must
handle: the fast forms must treat them as the per-node code does.
"""

from __future__ import annotations

from typing import Any

import pytest
from asched.testing import check_fast_forms, enable

from asched_policies import (
    CPU_UTILIZATION_SPEC,
    GPU_DRIVER_SPEC,
    GPU_RESOURCE_SPEC,
    LOCATION_SPEC,
    REGION_FENCE_SPEC,
    STRONGEST_CPU_SPEC,
)
from asched_policies.policy_annotations import (
    CPU_UTILIZATION,
    LOCATION,
    MIN_GPU_DRIVER,
    REGIONS,
)

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
DRIVER = "nvidia.com/cuda.driver.major"
GPU = "nvidia.com/gpu"

CASES: list[Any] = [
    pytest.param(
        REGION_FENCE_SPEC,
        {"defaultRegions": ["r1"]},
        {
            "node_labels": {REGION: ["r1", "r2", "r3"]},
            "pod_annotations": {REGIONS: ["r2", "r1,r3", "", " , ", "r9"]},
        },
        id="RegionFence",
    ),
    pytest.param(
        REGION_FENCE_SPEC,
        None,
        {"node_labels": {REGION: ["r1", "r2"]}, "pod_annotations": {REGIONS: ["r1", "r2"]}},
        id="RegionFence-no-defaults",
    ),
    pytest.param(
        GPU_DRIVER_SPEC,
        {"minMajor": 500},
        {
            "node_labels": {DRIVER: ["470", "535", "550", "x", "-1", "", " 535"]},
            "pod_annotations": {MIN_GPU_DRIVER: ["0", "535", "540", "abc"]},
            "resources": [GPU],
        },
        id="GPUDriver",
    ),
    pytest.param(
        STRONGEST_CPU_SPEC,
        None,
        {"resources": [GPU]},
        id="StrongestCPU",
    ),
    pytest.param(
        STRONGEST_CPU_SPEC,
        {"resource": GPU},
        {"resources": [GPU]},
        id="StrongestCPU-gpu",
    ),
    pytest.param(
        CPU_UTILIZATION_SPEC,
        {"defaultScore": 30},
        {"node_annotations": {CPU_UTILIZATION: ["0.1", "0.95", "1", "0", "nan", "x", "-0.5"]}},
        id="CPUUtilization",
    ),
    pytest.param(
        GPU_RESOURCE_SPEC,
        None,
        {"resources": [GPU]},
        id="GPUResource-MostAllocated",
    ),
    pytest.param(
        GPU_RESOURCE_SPEC,
        {"strategy": "LeastAllocated"},
        {"resources": [GPU]},
        id="GPUResource-LeastAllocated",
    ),
    pytest.param(
        LOCATION_SPEC,
        None,
        {
            "node_labels": {REGION: ["r1", "r2"], ZONE: ["z1", "z2"]},
            "pod_annotations": {LOCATION: ["r1", "r1/z1", "r2/z2", "r1/", "/z1", "r1/z1/x"]},
        },
        id="Location",
    ),
]


@pytest.mark.parametrize(("spec", "args", "universe"), CASES)
def test_fast_forms_equal_the_per_node_answers(spec: Any, args: Any, universe: Any) -> None:
    # NodeResourcesFit beside the policy: the pods fill nodes, so requested (GPUResource)
    # and the feasible set (StrongestCPU's min-max) vary.
    check_fast_forms([enable(spec, args=args, weight=2), "NodeResourcesFit"], **universe)


def test_all_six_together() -> None:
    check_fast_forms(
        [
            enable(REGION_FENCE_SPEC, args={"defaultRegions": ["r1", "r2"]}),
            enable(GPU_DRIVER_SPEC),
            enable(STRONGEST_CPU_SPEC, weight=3),
            enable(CPU_UTILIZATION_SPEC),
            enable(GPU_RESOURCE_SPEC),
            enable(LOCATION_SPEC),
            "NodeResourcesFit",
        ],
        node_labels={REGION: ["r1", "r2", "r3"], ZONE: ["z1", "z2"], DRIVER: ["470", "550"]},
        node_annotations={CPU_UTILIZATION: ["0.2", "0.7", "bad"]},
        pod_annotations={
            REGIONS: ["r3", ""],
            MIN_GPU_DRIVER: ["500"],
            LOCATION: ["r1/z2", "r2"],
        },
        resources=[GPU],
        max_examples=60,
    )
