"""Location: prefer nodes near where the pod says it wants to be.

The pod's annotation `policies.asched.dev/location` is "<region>/<zone>" (or just
"<region>"). Score, against the node's region and zone labels (args.regionLabelKey,
args.zoneLabelKey; topology.kubernetes.io/region and /zone by default):

- same region and same zone: 100;
- same region, other zone: 50;
- elsewhere (or unlabelled): 0.

With a region-only location, any node in that region meets the wish fully and scores
100. A preference, never a rejection: pods without the annotation are skipped in
PreScore, and a malformed value is logged and skipped too rather than blocking the pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import structlog
from asched.api import Node, Pod
from asched.framework import (
    MAX_NODE_SCORE,
    CycleState,
    NodeInfo,
    PluginSpec,
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


class Location(PreScorePlugin, ScorePlugin):
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

    def closeness(self, place: Place, node: Node) -> int:
        labels = node.labels
        if labels.get(self._args.region_label_key) != place.region:
            return 0
        if not place.zone or labels.get(self._args.zone_label_key) == place.zone:
            return SAME_ZONE_SCORE
        return SAME_REGION_SCORE


SPEC = PluginSpec(NAME, Location, LocationArgs)
