"""ImageLocality: spread-scaled image sizes, thresholds per container, Skip when nothing scores.

Cases follow kube-scheduler's imagelocality/image_locality_test.go; scores are worked
out in comments (MB = 2^20 bytes, thresholds 23 MB .. 1000 MB x containers).
"""

from __future__ import annotations

import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import ImageStateSummary, NodeInfo
from asched.framework.status import Code
from asched.plugins.imagelocality import ImageLocality
from asched.plugins.imagelocality.image_locality import calculate_priority
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

MB = 1024 * 1024
PAUSE = "registry.k8s.io/pause:3.10"


def with_images(name: str, *images: tuple[str, int]) -> Node:
    b = make_node(name)
    for image, size_mb in images:
        b.image([image], size_mb * MB)
    return b.obj()


def fill_image_states(infos: list[NodeInfo]) -> None:
    """What the cache does: per node, each image name with its size and node count."""
    counts: dict[str, int] = {}
    for ni in infos:
        assert ni.node is not None
        for img in ni.node.images:
            for n in img.names:
                counts[n] = counts.get(n, 0) + 1
    for ni in infos:
        assert ni.node is not None
        ni.image_states = {
            n: ImageStateSummary(img.size_bytes, counts[n])
            for img in ni.node.images
            for n in img.names
        }


def run(pod: Pod, nodes: list[Node], cached: bool) -> list[int] | None:
    infos = [node_info(n) for n in nodes]
    if cached:
        fill_image_states(infos)
    plugin = ImageLocality(None, FakeHandle(infos))
    state = CycleState()
    st = plugin.pre_score(state, pod, infos)
    if st is not None:
        assert st.code == Code.SKIP
        return None
    return [plugin.score(state, pod, ni) for ni in infos]


BIG = "gcr.io/300:latest"


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        # 300 MB on 2 of 3 nodes -> 200 MB; (200-23)*100/(1000-23) = 18.
        pytest.param(
            make_pod("p").image("gcr.io/300").obj(),
            [with_images("n1", (BIG, 300)), with_images("n2", (BIG, 300)), with_images("n3")],
            [18, 18, 0],
            id="untagged-image-spread",
        ),
        # 40 MB on 1 of 2 nodes -> 20 MB, under the 23 MB floor: nothing scores.
        pytest.param(
            make_pod("p").image("gcr.io/40:latest").obj(),
            [with_images("n1", ("gcr.io/40:latest", 40)), with_images("n2")],
            None,
            id="small-image-skips",
        ),
        pytest.param(
            make_pod("p").image("gcr.io/none").obj(),
            [with_images("n1", (BIG, 300))],
            None,
            id="image-absent-skips",
        ),
        # 3000 MB on the only node, clamped to 1000 MB for one container -> 100.
        pytest.param(
            make_pod("p").image("huge:1").obj(),
            [with_images("n1", ("huge:1", 3000))],
            [100],
            id="clamped-to-max",
        ),
        # Init container images count, and raise the ceiling to 2 x 1000 MB:
        # 1500 MB -> (1500-23)*100/(2000-23) = 74.
        pytest.param(
            make_pod("p").image("absent:1").init_container("init").obj(),
            [with_images("n1", (PAUSE, 1500))],
            [74],
            id="init-container-image",
        ),
        # Two containers, 500 MB each on the only node: (1000-23)*100/(2000-23) = 49.
        pytest.param(
            make_pod("p").image("a:1").container("c2", image="b:1").obj(),
            [with_images("n1", ("a:1", 500), ("b:1", 500))],
            [49],
            id="sum-over-containers",
        ),
    ],
)
@pytest.mark.parametrize("cached", [True, False], ids=["cache-summaries", "derived-summaries"])
def test_score(pod: Pod, nodes: list[Node], want: list[int] | None, cached: bool) -> None:
    assert run(pod, nodes, cached) == want


def test_score_without_prescore() -> None:
    nodes = [with_images("n1", (BIG, 300)), with_images("n2", (BIG, 300)), with_images("n3")]
    infos = [node_info(n) for n in nodes]
    plugin = ImageLocality(None, FakeHandle(infos))
    pod = make_pod("p").image(BIG).obj()
    assert [plugin.score(CycleState(), pod, ni) for ni in infos] == [18, 18, 0]


@pytest.mark.parametrize(
    ("total", "containers", "want"),
    [
        pytest.param(0, 1, 0, id="zero"),
        pytest.param(23 * MB, 1, 0, id="floor"),
        pytest.param(1000 * MB, 1, 100, id="ceiling"),
        pytest.param(1000 * MB, 2, 49, id="ceiling-scales-with-containers"),
    ],
)
def test_calculate_priority(total: int, containers: int, want: int) -> None:
    assert calculate_priority(total, containers) == want
