from __future__ import annotations

from collections import Counter

import pytest

from asched.demo.topology import GPU_LABEL, INFRA_TAINT, REGION, ZONE, demo_nodes


@pytest.mark.parametrize("count", [4, 8, 21], ids=["minimum", "default", "many"])
def test_every_demo_cluster_has_one_infra_two_gpu_and_plain_nodes(count: int) -> None:
    specs = demo_nodes(count)
    assert len(specs) == count
    assert len({s.name for s in specs}) == count
    tainted = [s.name for s in specs if s.taints]
    assert tainted == ["infra-1"]
    assert specs[0].taints == (INFRA_TAINT,)
    gpu = [s for s in specs if s.labels.get(GPU_LABEL[0]) == GPU_LABEL[1]]
    assert [s.name for s in gpu] == ["gpu-1", "gpu-2"]
    assert all(s.gpus > 0 for s in gpu)
    assert all(s.gpus == 0 for s in specs if s not in gpu)
    plain = [s for s in specs if s.name.startswith("node-")]
    assert len(plain) == count - 3


def test_default_cluster_mixes_sizes_zones_and_regions() -> None:
    specs = demo_nodes()
    plain_cpus = [s.cpu for s in specs if s.name.startswith("node-")]
    assert plain_cpus == ["2", "4", "8", "16", "2"]
    assert Counter(s.labels[ZONE] for s in specs) == {"zone-1a": 3, "zone-1b": 3, "zone-2a": 2}
    assert {s.labels[ZONE]: s.labels[REGION] for s in specs} == {
        "zone-1a": "region-1",
        "zone-1b": "region-1",
        "zone-2a": "region-2",
    }
    # The zonal demo pod needs a plain node in zone-2a.
    assert any(s.labels[ZONE] == "zone-2a" and not s.taints for s in specs)
    assert all(s.memory == f"{int(s.cpu) * 4}Gi" for s in specs)


def test_too_few_nodes() -> None:
    with pytest.raises(ValueError, match="at least 4"):
        demo_nodes(3)
