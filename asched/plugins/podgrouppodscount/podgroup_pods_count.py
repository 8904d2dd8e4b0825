"""PodGroupPodsCount: a placement scores the pods of its group it would have running.

Mirrors kube-scheduler 1.37 plugins/podgrouppodscount:
- ScorePlacement: the group's pods already scheduled (bound or assumed) plus the members
  the placement places;
- NormalizePlacementScore: scaled to [0, 100] by the highest; every placement placing
  nothing of a group with nothing scheduled is an Error ("no pods from pod group are
  assigned to any of the candidate placements"), which GangScheduling's PlacementFeasible
  keeps from happening.
"""

from __future__ import annotations

from asched.framework.handle import Handle
from asched.framework.interfaces import PlacementScoreNormalizer, PlacementScorePlugin
from asched.framework.podgroups import PlacementScore, PodGroupAssignments, PodGroupInfo
from asched.framework.registry import PluginSpec
from asched.framework.status import Status, error
from asched.framework.types import MAX_NODE_SCORE, MIN_NODE_SCORE

NAME = "PodGroupPodsCount"
NOTHING_ASSIGNED = "no pods from pod group are assigned to any of the candidate placements"


class PodGroupPodsCount(PlacementScorePlugin, PlacementScoreNormalizer):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def score_placement(self, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        return len(group.scheduled) + len(assignments.assignments)

    def normalize_placement_score(
        self, group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None:
        top = max((s.score for s in scores), default=0)
        if top == 0:
            return error(NOTHING_ASSIGNED, plugin=NAME)
        for s in scores:
            s.score = MIN_NODE_SCORE + s.score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // top
        return None


SPEC = PluginSpec(NAME, PodGroupPodsCount, None)
