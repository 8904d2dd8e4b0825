"""ImageLocality: favour nodes that already hold the pod's container images.

Mirrors kube-scheduler plugins/imagelocality: for each container and init container
whose image (normalized to `name:latest` when untagged) is on the node, add the image's
size scaled by its spread (nodes having it / all nodes, against the "node heating"
problem); the sum, clamped to [23 MB, 1000 MB x number of containers], maps linearly to
[0, 100]. No normalization.

The image summaries (size, number of nodes) come from NodeInfo.image_states, which the
cache fills. When a node has images but no summaries (a cache that does not fill them),
PreScore derives them from the snapshot for the pod's images only. PreScore computes
every feasible node's score once and answers Skip when none scores above 0 (the common
case: images absent or small), which ranks nodes exactly as all-zero scores would.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from asched.api import Node, Pod
from asched.framework.columns import Int64s, NodeColumns, NodeRows, Unbatchable
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.handle import Handle
from asched.framework.interfaces import PreScorePlugin, ScorePlugin
from asched.framework.listers import SnapshotLister
from asched.framework.nodeinfo import ImageStateSummary, NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import IMAGE_NAMES, SignFragment, SignResult
from asched.framework.status import Status, skip
from asched.framework.types import MAX_NODE_SCORE
from asched.plugins.helpers import normalized_image_name

NAME = "ImageLocality"

MB = 1024 * 1024
# Bounds of the image score range: 90% of images on Docker Hub fall in it.
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

_PRE_SCORE_KEY: StateKey[dict[str, int]] = StateKey("PreScore" + NAME)
_SKIP = skip(NAME)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def scaled_image_score(state: ImageStateSummary, total_nodes: int) -> int:
    spread = float(state.num_nodes) / float(total_nodes)
    return int(float(state.size) * spread)


def summaries_from_snapshot(
    snapshot: SnapshotLister, names: frozenset[str]
) -> dict[str, ImageStateSummary]:
    """ImageStateSummary of each of `names` over every node of the snapshot."""
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for ni in snapshot.node_infos():
        node = ni.node
        if node is None or not node.images:
            continue
        seen: set[str] = set()
        for image in node.images:
            for name in image.names:
                if name in names and name not in seen:
                    seen.add(name)
                    sizes.setdefault(name, image.size_bytes)
                    counts[name] = counts.get(name, 0) + 1
    return {name: ImageStateSummary(sizes[name], counts[name]) for name in sizes}


def _node_states(
    node: Node, summaries: dict[str, ImageStateSummary]
) -> dict[str, ImageStateSummary]:
    return {
        name: summaries[name] for image in node.images for name in image.names if name in summaries
    }


class ImageLocality(PreScorePlugin, ScorePlugin):
    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """ImageLocality.SignPod: the distinct normalized image names, sorted."""
        return (SignFragment(IMAGE_NAMES, sorted({normalized_image_name(i) for i in pod.images})),)

    def _priorities(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, int]:
        """Node name -> score, for the nodes scoring above 0."""
        names = tuple(normalized_image_name(image) for image in pod.images)
        if not names:
            return {}
        snapshot = self._handle.snapshot
        total = snapshot.num_nodes() or 1
        derived: dict[str, ImageStateSummary] | None = None
        scores: dict[str, int] = {}
        for ni in nodes:
            states = ni.image_states
            if not states:
                node = ni.node
                if node is None or not node.images:
                    continue
                if derived is None:
                    derived = summaries_from_snapshot(snapshot, frozenset(names))
                states = _node_states(node, derived)
            total_size = 0
            for name in names:
                summary = states.get(name)
                if summary is not None:
                    total_size += scaled_image_score(summary, total)
            priority = calculate_priority(total_size, len(names))
            if priority:
                scores[ni.name] = priority
        return scores

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if isinstance(nodes, NodeRows) and not nodes.columns.has_images[nodes.rows].any():
            return _SKIP  # what _priorities would conclude, without visiting every node
        scores = self._priorities(pod, nodes)
        if not scores:
            return _SKIP
        state.write(_PRE_SCORE_KEY, scores)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        scores = state.get(_PRE_SCORE_KEY)
        if scores is None:
            # PreScore disabled in this profile: score this node on its own.
            scores = self._priorities(pod, (node_info,))
        return scores.get(node_info.name, 0)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        """PreScore already scored every node; only nodes with images can be above 0."""
        scores = state.get(_PRE_SCORE_KEY)
        if scores is None:
            raise Unbatchable  # PreScore disabled: the per-node path scores node by node
        out = np.zeros(len(rows), dtype=np.int64)
        names = cols.names
        for k in np.flatnonzero(cols.has_images[rows]).tolist():
            out[k] = scores.get(names[int(rows[k])], 0)
        return out


SPEC = PluginSpec(NAME, ImageLocality, None)
