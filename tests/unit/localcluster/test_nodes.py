from __future__ import annotations

import pytest

from asched.localcluster.nodes import NodeSpec, Taint, build_node_manifest, is_ready, node_specs


def test_default_node_is_kwok_managed_with_capacity_equal_allocatable() -> None:
    node = build_node_manifest(NodeSpec("n1"))
    assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert node["metadata"]["labels"]["type"] == "kwok"
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "n1"
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}
    assert node["status"]["capacity"] == node["status"]["allocatable"]
    assert node["status"]["capacity"] is not node["status"]["allocatable"]
    assert "taints" not in node["spec"]


@pytest.mark.parametrize(
    ("spec", "key", "expected"),
    [
        pytest.param(NodeSpec("g", gpus=4), "nvidia.com/gpu", "4", id="gpus"),
        pytest.param(NodeSpec("c", gpus=0), "nvidia.com/gpu", None, id="no-gpus"),
        pytest.param(
            NodeSpec("e", extra={"ephemeral-storage": "100Gi"}),
            "ephemeral-storage",
            "100Gi",
            id="extra",
        ),
        pytest.param(NodeSpec("p", pods=250), "pods", "250", id="pods"),
    ],
)
def test_allocatable(spec: NodeSpec, key: str, expected: str | None) -> None:
    assert build_node_manifest(spec)["status"]["allocatable"].get(key) == expected


def test_labels_and_taints() -> None:
    node = build_node_manifest(
        NodeSpec(
            "n",
            labels={"zone": "a", "kubernetes.io/os": "plan9"},
            taints=(Taint("k", "v", "NoExecute"), Taint("only-key")),
        )
    )
    assert node["metadata"]["labels"]["zone"] == "a"
    assert node["metadata"]["labels"]["kubernetes.io/os"] == "plan9"  # caller wins
    assert node["spec"]["taints"] == [
        {"key": "k", "value": "v", "effect": "NoExecute"},
        {"key": "only-key", "value": "", "effect": "NoSchedule"},
    ]


def test_node_specs_names_and_gpu_nodes() -> None:
    specs = node_specs(12, gpu_nodes=2, gpus_per_node=4, cpu="16")
    assert [s.name for s in specs[:2]] == ["kwok-node-0000", "kwok-node-0001"]
    assert specs[-1].name == "kwok-node-0011"
    assert [s.gpus for s in specs] == [0] * 10 + [4, 4]
    assert specs[-1].labels == {"nvidia.com/gpu.present": "true"}
    assert all(s.cpu == "16" for s in specs)


def test_node_specs_widens_names_for_large_counts() -> None:
    assert node_specs(20000)[-1].name == "kwok-node-19999"


@pytest.mark.parametrize("gpu_nodes", [-1, 4])
def test_node_specs_rejects_bad_gpu_count(gpu_nodes: int) -> None:
    with pytest.raises(ValueError, match="gpu_nodes"):
        node_specs(3, gpu_nodes=gpu_nodes)


@pytest.mark.parametrize(
    ("conditions", "ready"),
    [
        ([{"type": "Ready", "status": "True"}], True),
        ([{"type": "Ready", "status": "False"}], False),
        ([{"type": "MemoryPressure", "status": "True"}], False),
        (None, False),
    ],
)
def test_is_ready(conditions: list[dict[str, str]] | None, ready: bool) -> None:
    assert is_ready({"status": {"conditions": conditions}}) is ready
