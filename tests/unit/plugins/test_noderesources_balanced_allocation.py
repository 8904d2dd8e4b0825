"""NodeResourcesBalancedAllocation: the v1.36+ balance-improvement score.

Each node's balance is (1 - std of its usage fractions) * 100, with the pod ("with") and
without it ("without"); the score is 50 + (50 + with - without) / 2. The "with" values
are the ones kube-scheduler's balanced_allocation_test.go states for the same inputs.
"""

from __future__ import annotations

import random

import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.status import Code
from asched.plugins.noderesources import BalancedAllocationArgs
from asched.plugins.noderesources.balanced_allocation import BalancedAllocation
from asched.plugins.noderesources.scorers import (
    balanced_improvement,
    balanced_improvement_pair,
    balanced_score,
)
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

GPU = "nvidia.com/gpu"
WITH_GPU = {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]}


def node(name: str, cpu: str, memory: str, gpus: str | None = None) -> Node:
    b = make_node(name).capacity(cpu=cpu, memory=memory)
    if gpus:
        b.resource(GPU, gpus)
    return b.obj()


def cpu_only(on: str = "") -> Pod:
    b = (
        make_pod("cpu-only")
        .cpu("1000m")
        .memory("0")
        .container("c2", requests={"cpu": "2000m", "memory": "0"})
    )
    return (b.node(on) if on else b).obj()


def cpu_and_memory(on: str = "", gpus: str = "") -> Pod:
    b = (
        make_pod("cpu-mem")
        .cpu("1000m")
        .memory("2000")
        .container(
            "c2", requests={"cpu": "2000m", "memory": "3000", **({GPU: gpus} if gpus else {})}
        )
    )
    return (b.node(on) if on else b).obj()


def run(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    args: dict[str, object] | None = None,
    pre_score: bool = True,
) -> list[int]:
    infos = [node_info(n, *[p for p in existing if p.node_name == n.name]) for n in nodes]
    plugin = BalancedAllocation(
        BalancedAllocationArgs.from_dict(args or {}, "args"), FakeHandle(infos)
    )
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, pod, infos) is None
    return [plugin.score(state, pod, ni) for ni in infos]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "args", "want"),
    [
        # n1: with 0.75/0.5 -> 87, without 0/0 -> 100 -> 68. n2: 100 and 100 -> 75.
        pytest.param(
            cpu_and_memory(),
            [node("n1", "4", "10000"), node("n2", "6", "10000")],
            [],
            None,
            [68, 75],
            id="empty-nodes-differently-sized",
        ),
        # n1: with 0.6/0.25 -> 82, without 0.3/0 -> 85 -> 73.
        # n2: with 0.6/0.5 -> 95, without 0.3/0.25 -> 97 -> 74.
        pytest.param(
            cpu_and_memory(),
            [node("n1", "10", "20000"), node("n2", "10", "20000")],
            [cpu_only("n1"), cpu_and_memory("n2")],
            None,
            [73, 74],
            id="pods-scheduled",
        ),
        # with 1.0/0 -> 50, without 0.5/0 -> 75 -> 62: the pod makes the node lopsided.
        pytest.param(
            cpu_only(), [node("n1", "6", "10000")], [cpu_only("n1")], None, [62], id="at-capacity"
        ),
        # n1: cpu .857 mem .125 gpu 4/8 -> 70, without gpu 3/8 -> 69 -> 75.
        # n2: gpu 1/8 -> 65, without gpu 0/8 -> 62 -> 76.
        pytest.param(
            make_pod("p").memory("0").request(GPU, "1").obj(),
            [node("n1", "3500m", "40000", "8"), node("n2", "3500m", "40000", "8")],
            [cpu_and_memory("n1", gpus="3"), cpu_and_memory("n2")],
            WITH_GPU,
            [75, 76],
            id="three-resources",
        ),
        # The pod does not request GPUs: they are left out, on both nodes.
        # with .857/.125 -> 63, without 0/0 -> 100 -> 56.
        pytest.param(
            cpu_and_memory(),
            [node("n1", "3500m", "40000", "8"), node("n2", "3500m", "40000")],
            [],
            WITH_GPU,
            [56, 56],
            id="unrequested-extended-skipped",
        ),
    ],
)
def test_score(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    args: dict[str, object] | None,
    want: list[int],
) -> None:
    assert run(pod, nodes, existing, args) == want
    assert run(pod, nodes, existing, args, pre_score=False) == want


def test_best_effort_pod_is_skipped() -> None:
    plugin = BalancedAllocation(None, FakeHandle())
    st = plugin.pre_score(CycleState(), make_pod("p").obj(), [])
    assert st is not None
    assert st.code == Code.SKIP


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        pytest.param([50, 50], [25, 25], [100, 100], 75, id="unchanged-balance"),
        pytest.param([100, 0], [0, 0], [100, 100], 50, id="balanced-to-unbalanced"),
        pytest.param([100, 100], [100, 0], [100, 100], 100, id="unbalanced-to-balanced"),
        pytest.param([10, 0], [0, 0], [0, 0], 75, id="nothing-allocatable"),
    ],
)
def test_balanced_improvement_bounds(
    requested: list[int], allocated: list[int], allocatable: list[int], want: int
) -> None:
    assert balanced_improvement(requested, allocated, allocatable) == want


def test_fractions_above_one_are_capped() -> None:
    assert balanced_score([300, 100], [100, 100]) == 100


def test_two_resource_fast_path_matches_the_general_formula() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        a0, a1 = rng.choice([0, rng.randint(1, 64_000)]), rng.randint(0, 2**36)
        p0, p1 = rng.randint(0, 8_000), rng.randint(0, 2**33)
        r0, r1 = rng.randint(0, 70_000) + p0, rng.randint(0, 2**36) + p1
        allocatable = [a0, a1]
        requested = [r0 if a0 else 0, r1 if a1 else 0]
        allocated = [r0 - p0 if a0 else 0, r1 - p1 if a1 else 0]
        assert balanced_improvement_pair(r0, a0, r1, a1, p0=p0, p1=p1) == balanced_improvement(
            requested, allocated, allocatable
        ), (r0, a0, r1, a1, p0, p1)
