"""Location: prefer nodes near where the pod says it wants to be.

The pod's annotation `policies.asched.dev/location` is "<region>/<zone>" (or just
"<region>"). Score, against the node's region and zone labels (args.regionLabelKey,
args.zoneLabelKey; topology.kubernetes.io/region and /zone by default):

- same region and same zone: 100;
- same region, other zone: 50;
- elsewhere (or unlabelled): 0.

With a region-only location, any node in that region meets the wish fully and scores
100. Fast form: `score_batch` compares the region and zone label columns with the wanted
place (one comparison of label codes each), and `pod_key` (the wanted place) signs pods.

A preference, never a rejection: pods without the annotation are skipped in
PreScore, and a malformed value is logged and skipped too rather than blocking the pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
import structlog
from asched.api import Node, Pod
from asched.framework import (
    MAX_NODE_SCORE,
    BatchScorePlugin,
    CycleState,
    Int64s,
    NodeColumns,
    NodeInfo,
    NodeStaticPlugin,
    PluginSpec,
    PodKey,
    PreScorePlugin,
    ScorePlugin,
    StateKey,
    Status,
)
from asched.framework.handle import Handle
from asched.framework.status import skip
from asched.plugins.helpers import check_fields

from asched_policies.args import read_key
from asched_policies.policy_annotations import LOCATION, Malformed, Place, parse_location

NAME = "Location"
DEFAULT_REGION_LABEL = "topology.kubernetes.io/region"
DEFAULT_ZONE_LABEL = "topology.kubernetes.io/zone"
SAME_ZONE_SCORE = MAX_NODE_SCORE
SAME_REGION_SCORE = MAX_NODE_SCORE // 2

_SKIP = skip(NAME)
_PLACE_KEY: StateKey[Place] = StateKey("PreScore" + NAME)

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class LocationArgs:
    region_label_key: str = DEFAULT_REGION_LABEL
    zone_label_key: str = DEFAULT_ZONE_LABEL

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("regionLabelKey", "zoneLabelKey"), path)
        return cls(
            read_key(raw, "regionLabelKey", path, DEFAULT_REGION_LABEL),
            read_key(raw, "zoneLabelKey", path, DEFAULT_ZONE_LABEL),
        )


Args = LocationArgs


class Location(PreScorePlugin, ScorePlugin, BatchScorePlugin, NodeStaticPlugin):
    def __init__(self, args: LocationArgs | None, handle: Handle) -> None:
        self._args = args or LocationArgs()
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    @staticmethod
    def wanted_place(pod: Pod) -> Place | Malformed | None:
        return parse_location(pod.annotations.get(LOCATION))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        place = self.wanted_place(pod)
        if isinstance(place, Malformed):
            log.warning("location_malformed", pod=pod.key, annotation=LOCATION, value=place.text)
            return _SKIP
        if place is None:
            return _SKIP
        state.write(_PLACE_KEY, place)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None:
            raise LookupError(f"node {node_info.name!r} has no Node object")
        place = state.get(_PLACE_KEY)
        if place is None:
            # PreScore disabled in this profile: work it out here (a bad value ranks nothing).
            wanted = self.wanted_place(pod)
            if not isinstance(wanted, Place):
                return 0
            place = wanted
        return self.closeness(place, node)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        place = state.get(_PLACE_KEY)
        if place is None:
            wanted = self.wanted_place(pod)
            if not isinstance(wanted, Place):
                return np.zeros(len(rows), dtype=np.int64)
            place = wanted
        in_region = cols.label(self._args.region_label_key).isin((place.region,), rows)
        if not place.zone:
            out: Int64s = np.where(in_region, SAME_ZONE_SCORE, 0).astype(np.int64)
            return out
        in_zone = cols.label(self._args.zone_label_key).isin((place.zone,), rows)
        scores = np.where(in_zone, SAME_ZONE_SCORE, SAME_REGION_SCORE)
        out = np.where(in_region, scores, 0).astype(np.int64)
        return out

    def pod_key(self, pod: Pod) -> PodKey:
        place = self.wanted_place(pod)
        if isinstance(place, Place):
            return (place.region, place.zone)
        return None if place is None else ("malformed", place.text)

    def closeness(self, place: Place, node: Node) -> int:
        labels = node.labels
        if labels.get(self._args.region_label_key) != place.region:
            return 0
        if not place.zone or labels.get(self._args.zone_label_key) == place.zone:
            return SAME_ZONE_SCORE
        return SAME_REGION_SCORE


SPEC = PluginSpec(NAME, Location, LocationArgs)
