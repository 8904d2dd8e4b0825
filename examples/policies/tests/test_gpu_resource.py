"""GPUResource: pack (MostAllocated) or spread (LeastAllocated) GPU pods by free GPUs,
Skip for pods without GPU requests, args validation."""

from __future__ import annotations

from typing import Any

import pytest
from asched.api import Node, Pod
from asched.framework import ArgsError, Code, CycleState, NodeInfo
from asched.testing import FakeHandle, Runner, enable, make_node, make_pod, node_info

from asched_policies.gpu_resource import SPEC, GPUResource, GPUResourceArgs

GPU = "nvidia.com/gpu"


def plugin(args: dict[str, Any] | None = None) -> GPUResource:
    return GPUResource(GPUResourceArgs.from_dict(args or {}, "args"), FakeHandle())


def gpu_pod(name: str, gpus: str, resource: str = GPU) -> Pod:
    return make_pod(name).request(resource, gpus).obj()


def gpu_node(name: str, total: str | None, *used: str, resource: str = GPU) -> NodeInfo:
    """A node with `total` GPUs (None = no GPU resource) and pods using `used` GPUs each."""
    b = make_node(name)
    if total is not None:
        b.resource(resource, total)
    pods = [
        make_pod(f"{name}-used-{i}").request(resource, n).node(name).obj()
        for i, n in enumerate(used)
    ]
    return node_info(b.obj(), *pods)


def run(p: GPUResource, pd: Pod, nodes: list[NodeInfo]) -> dict[str, int] | str:
    """PreScore, then Score each node, as the framework does; "skip" when PreScore skips."""
    state = CycleState()
    st = p.pre_score(state, pd, nodes)
    if st is not None:
        assert st.code == Code.SKIP
        return "skip"
    return {ni.name: p.score(state, pd, ni) for ni in nodes}


NODES = [
    gpu_node("busy", "8", "4", "2"),  # 6 of 8 used
    gpu_node("empty", "4"),
    gpu_node("full", "2", "2"),
    gpu_node("cpu-only", None),
]

SCORE_CASES = [
    pytest.param(
        {},
        gpu_pod("p", "1"),
        {"busy": 87, "empty": 25, "full": 100, "cpu-only": 0},
        id="most-allocated-by-default",
    ),
    pytest.param(
        {"strategy": "MostAllocated"},
        gpu_pod("p", "2"),
        {"busy": 100, "empty": 50, "full": 100, "cpu-only": 0},
        id="pack-two",
    ),
    pytest.param(
        {"strategy": "LeastAllocated"},
        gpu_pod("p", "1"),
        {"busy": 12, "empty": 75, "full": 0, "cpu-only": 0},
        id="spread",
    ),
    pytest.param(
        {"strategy": "LeastAllocated"},
        gpu_pod("p", "4"),
        {"busy": 0, "empty": 0, "full": 0, "cpu-only": 0},
        id="spread-over-capacity",
    ),
    pytest.param({}, make_pod("p").cpu("1").obj(), "skip", id="no-gpu-request-skips"),
    pytest.param({}, gpu_pod("p", "0"), "skip", id="zero-gpus-skips"),
    pytest.param(
        {"resourceName": "amd.com/gpu"},
        gpu_pod("p", "1"),
        "skip",
        id="other-resource-not-requested",
    ),
]


@pytest.mark.parametrize(("args", "pd", "want"), SCORE_CASES)
def test_score(args: dict[str, Any], pd: Pod, want: dict[str, int] | str) -> None:
    assert run(plugin(args), pd, NODES) == want


def test_custom_resource_name() -> None:
    nodes = [
        gpu_node("a", "4", "3", resource="amd.com/gpu"),
        gpu_node("b", "4", resource="amd.com/gpu"),
    ]
    got = run(plugin({"resourceName": "amd.com/gpu"}), gpu_pod("p", "1", "amd.com/gpu"), nodes)
    assert got == {"a": 100, "b": 25}


@pytest.mark.parametrize(
    ("pd", "want"),
    [
        pytest.param(gpu_pod("p", "1"), 87, id="gpu-pod"),
        pytest.param(make_pod("p").obj(), 0, id="non-gpu-pod-scores-zero"),
    ],
)
def test_score_without_pre_score(pd: Pod, want: int) -> None:
    """A profile may enable Score alone; GPU pods still rank and others score 0."""
    assert plugin().score(CycleState(), pd, NODES[0]) == want


def test_args_defaults() -> None:
    assert GPUResourceArgs.from_dict({}, "args") == GPUResourceArgs("MostAllocated", GPU)


ARGS_ERRORS = [
    pytest.param({"strategy": "Balanced"}, "args.strategy", "Unsupported value", id="strategy"),
    pytest.param(
        {"strategy": "mostallocated"},
        "args.strategy",
        "Unsupported value",
        id="strategy-case-matters",
    ),
    pytest.param(
        {"resourceName": "memory"}, "args.resourceName", "extended resource", id="native-resource"
    ),
    pytest.param(
        {"resourceName": ["nvidia.com/gpu"]},
        "args.resourceName",
        "must be a string",
        id="resource-not-string",
    ),
    pytest.param(
        {"scoringStrategy": {}}, "args.scoringStrategy", "unknown field", id="unknown-field"
    ),
]


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_ERRORS)
def test_args_errors(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        GPUResourceArgs.from_dict(raw, "args")
    assert err.value.path == path
    assert message in err.value.message


# --- through the framework --------------------------------------------------------


def gpu_cluster() -> tuple[list[Node], list[Pod]]:
    nodes = [make_node(n).resource(GPU, "8").obj() for n in ("idle", "half", "busy")]
    used = [
        make_pod(f"{node}-{i}").request(GPU, "2").node(node).obj()
        for node, n in (("half", 2), ("busy", 3))
        for i in range(n)
    ]
    return nodes, used


@pytest.mark.parametrize(
    ("strategy", "ranking"),
    [
        pytest.param("MostAllocated", ["busy", "half", "idle"], id="pack"),
        pytest.param("LeastAllocated", ["idle", "half", "busy"], id="spread"),
    ],
)
async def test_framework_orders_nodes_by_strategy(strategy: str, ranking: list[str]) -> None:
    """With NodeResourcesFit in the profile, as in a real one: GPUs are counted on the
    nodes, the busiest fitting node wins when packing, the idlest when spreading."""
    nodes, used = gpu_cluster()
    runner = Runner(
        [enable(SPEC, args={"strategy": strategy}, weight=2), "NodeResourcesFit"],
        nodes=nodes,
        pods=used,
    )
    result = await runner.schedule(gpu_pod("p", "2"))
    assert result.feasible == ["idle", "half", "busy"]
    gpus = result.scores["GPUResource"]
    assert sorted(gpus.raw, key=lambda n: -gpus.raw[n]) == ranking
    assert gpus.weighted == {n: 2 * v for n, v in gpus.normalized.items()}
    assert result.selected == ranking[0]


async def test_framework_skips_score_for_pods_without_gpus() -> None:
    nodes, used = gpu_cluster()
    result = await Runner([SPEC], nodes=nodes, pods=used).schedule(make_pod("p").obj())
    assert result.skipped_scores == {"GPUResource"}
    assert "GPUResource" not in result.scores
