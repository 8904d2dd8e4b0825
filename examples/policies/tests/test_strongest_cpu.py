"""StrongestCPU: allocatable scores normalized min-max across the scored nodes; args."""

from __future__ import annotations

from typing import Any

import pytest
from asched.api import Node
from asched.framework import ArgsError, CycleState, NodeScore
from asched.testing import FakeHandle, Runner, enable, make_node, make_pod, node_info

from asched_policies.strongest_cpu import SPEC, StrongestCPU, StrongestCPUArgs, min_max_normalize


def scores(args: dict[str, Any], nodes: list[Node]) -> dict[str, int]:
    """What the framework does: Score every node, then NormalizeScore the list."""
    plugin = StrongestCPU(StrongestCPUArgs.from_dict(args, "args"), FakeHandle())
    state, pod = CycleState(), make_pod("p").cpu("100m").obj()
    result = [NodeScore(n.name, plugin.score(state, pod, node_info(n))) for n in nodes]
    assert plugin.normalize_score(state, pod, result) is None
    return {s.name: s.score for s in result}


def cpu(name: str, q: str) -> Node:
    return make_node(name).capacity(cpu=q).obj()


def memory(name: str, q: str) -> Node:
    return make_node(name).capacity(memory=q).obj()


def gpus(name: str, n: str) -> Node:
    return make_node(name).resource("nvidia.com/gpu", n).obj()


SCORE_CASES = [
    pytest.param(
        {},
        [cpu("a", "4"), cpu("b", "8"), cpu("c", "16")],
        {"a": 0, "b": 33, "c": 100},
        id="cpu-strongest-wins",
    ),
    pytest.param(
        {}, [cpu("a", "500m"), cpu("b", "1500m")], {"a": 0, "b": 100}, id="millicores-count"
    ),
    pytest.param(
        {}, [cpu("a", "8"), cpu("b", "8")], {"a": 100, "b": 100}, id="all-equal-all-strongest"
    ),
    pytest.param({}, [cpu("only", "2")], {"only": 100}, id="single-node"),
    pytest.param(
        {"resource": "memory"},
        [memory("a", "8Gi"), memory("b", "16Gi"), memory("c", "32Gi")],
        {"a": 0, "b": 33, "c": 100},
        id="memory",
    ),
    pytest.param(
        {"resource": "memory"},
        [cpu("big-cpu", "64"), memory("big-mem", "64Gi")],
        {"big-cpu": 0, "big-mem": 100},
        id="memory-ignores-cpu",
    ),
    pytest.param(
        {"resource": "nvidia.com/gpu"},
        [make_node("none").obj(), gpus("two", "2"), gpus("eight", "8")],
        {"none": 0, "two": 25, "eight": 100},
        id="extended-resource",
    ),
]


@pytest.mark.parametrize(("args", "nodes", "want"), SCORE_CASES)
def test_score(args: dict[str, Any], nodes: list[Node], want: dict[str, int]) -> None:
    assert scores(args, nodes) == want


def test_normalize_empty_list_is_a_no_op() -> None:
    empty: list[NodeScore] = []
    min_max_normalize(empty)
    assert empty == []


ARGS_CASES = [
    pytest.param({}, StrongestCPUArgs("cpu"), id="default-cpu"),
    pytest.param({"resource": "memory"}, StrongestCPUArgs("memory"), id="memory"),
    pytest.param(
        {"resource": "ephemeral-storage"},
        StrongestCPUArgs("ephemeral-storage"),
        id="ephemeral-storage",
    ),
    pytest.param({"resource": "hugepages-2Mi"}, StrongestCPUArgs("hugepages-2Mi"), id="hugepages"),
    pytest.param(
        {"resource": "example.com/fpga"}, StrongestCPUArgs("example.com/fpga"), id="extended"
    ),
]


@pytest.mark.parametrize(("raw", "want"), ARGS_CASES)
def test_args(raw: dict[str, Any], want: StrongestCPUArgs) -> None:
    assert StrongestCPUArgs.from_dict(raw, "args") == want


ARGS_ERRORS = [
    pytest.param({"resource": "gpu"}, "args.resource", "Unsupported value", id="unknown-name"),
    pytest.param({"resource": ""}, "args.resource", "Unsupported value", id="empty"),
    pytest.param({"resource": 4}, "args.resource", "must be a string", id="not-a-string"),
    pytest.param({"weight": 2}, "args.weight", "unknown field", id="unknown-field"),
]


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_ERRORS)
def test_args_errors(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        StrongestCPUArgs.from_dict(raw, "args")
    assert err.value.path == path
    assert message in err.value.message


# --- through the framework --------------------------------------------------------


async def test_framework_normalizes_weights_and_selects_the_strongest() -> None:
    runner = Runner(
        [enable(SPEC, weight=10), "NodeResourcesFit"],
        nodes=[cpu("a", "4"), cpu("b", "8"), cpu("c", "16")],
    )
    result = await runner.schedule(make_pod("p").cpu("6").obj())
    assert result.rejected["a"].plugin == "NodeResourcesFit"
    strongest = result.scores["StrongestCPU"]
    # Normalized over the feasible nodes only: the weakest of those gets 0.
    assert strongest.raw == {"b": 8000, "c": 16000}
    assert strongest.normalized == {"b": 0, "c": 100}
    assert strongest.weighted == {"b": 0, "c": 1000}
    assert result.selected == "c"
