"""Runs the pod group cycle's extension points of one profile (kube-scheduler frameworkImpl
RunPlacementGeneratePlugins, RunPlacementScorePlugins and RunPodGroupPostFilterPlugins).

The Framework owns one; the group cycle (asched.scheduler.groupcycle) calls it. As for the
other points, a plugin's exception becomes an Error status naming the plugin (counted as
a plugin crash), and each run reports scheduler_framework_extension_point_duration_seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from asched.framework.interfaces import (
    PlacementGeneratePlugin,
    PlacementScoreNormalizer,
    PlacementScorePlugin,
    PodGroupPostFilterPlugin,
    PodGroupScheduling,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import (
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
    whole,
)
from asched.framework.status import Code, Status, error
from asched.framework.types import MAX_NODE_SCORE, MIN_NODE_SCORE

NO_FEASIBLE_PLACEMENTS = "no feasible placements found"

#: (point label, status, perf_counter start) -> reports the point's duration.
PointTimer = Callable[[str, Status | None, float], None]


class PodGroupPoints:
    """The profile's PlacementGenerate, PlacementScore and PodGroupPostFilter plugins."""

    def __init__(
        self,
        generate: Sequence[PlacementGeneratePlugin],
        score: Sequence[PlacementScorePlugin],
        weights: Mapping[str, int],
        post_filter: Sequence[PodGroupPostFilterPlugin],
        *,
        crashed: Callable[..., None],
        timed: PointTimer,
    ) -> None:
        """`weights`: each PlacementScore plugin's resolved weight (missing means 1);
        `crashed` is called inside `except` when a plugin raises."""
        if len(generate) > 1:
            names = ", ".join(p.name for p in generate)
            # NewFramework: "at most one placement generate plugin is allowed".
            raise ValueError(f"at most one placementGenerate plugin is allowed, got {names}")
        self.generate = generate[0] if generate else None
        self.score = list(score)
        self.weights = {p.name: weights.get(p.name) or 1 for p in self.score}
        self.post_filter = list(post_filter)
        self._normalizers = {
            p.name: p for p in self.score if isinstance(p, PlacementScoreNormalizer)
        }
        self._crashed = crashed
        self._timed = timed

    def run_placement_generate(
        self, group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[Placement], Status | None]:
        """RunPlacementGeneratePlugins: the one plugin's placements, or every node as one
        placement when the profile has none; no placement is Unschedulable "no feasible
        placements found"; a failing status comes back tagged with the plugin."""
        pl = self.generate
        if pl is None:
            return [whole(nodes)], None
        start = time.perf_counter()
        st: Status | None
        try:
            placements, st = pl.generate_placements(group, nodes)
        except Exception as exc:
            self._crashed(plugin=pl.name, point="PlacementGenerate", podgroup=group.pod_group.key)
            placements, st = [], error(exc)
        if st is not None and not st.is_success():
            st = st.with_plugin(pl.name)
        elif not placements:
            st = Status(Code.UNSCHEDULABLE, (NO_FEASIBLE_PLACEMENTS,), pl.name)
        else:
            st = None
        self._timed("PlacementGenerate", st, start)
        return ([] if st is not None else list(placements)), st

    def run_placement_score(
        self, group: PodGroupInfo, candidates: Sequence[PodGroupAssignments]
    ) -> tuple[list[int], Status | None]:
        """RunPlacementScorePlugins: each candidate's weighted total over the plugins,
        aligned with `candidates` (all 0 without plugins). Any failure, or a normalized
        score outside [0, 100], is an Error for the group."""
        start = time.perf_counter()
        totals, st = self._score(group, candidates)
        self._timed("PlacementScore", st, start)
        return totals, st

    def _score(
        self, group: PodGroupInfo, candidates: Sequence[PodGroupAssignments]
    ) -> tuple[list[int], Status | None]:
        totals = [0] * len(candidates)
        for pl in self.score:
            scores: list[PlacementScore] = []
            for c in candidates:
                try:
                    scores.append(PlacementScore(c.placement, int(pl.score_placement(group, c))))
                except Exception as exc:
                    self._crashed(plugin=pl.name, point="PlacementScore", **_where(group))
                    return [], _failed("running PlacementScore plugins", pl.name, str(exc))
            normalizer = self._normalizers.get(pl.name)
            if normalizer is not None:
                try:
                    st = normalizer.normalize_placement_score(group, scores)
                except Exception as exc:
                    self._crashed(plugin=pl.name, point="NormalizePlacementScore", **_where(group))
                    st = error(exc)
                if st is not None and not st.is_success():
                    return [], _failed(
                        "running NormalizePlacementScore on PlacementScore plugins",
                        pl.name,
                        st.message(),
                    )
            weight = self.weights[pl.name]
            for i, s in enumerate(scores):
                if not MIN_NODE_SCORE <= s.score <= MAX_NODE_SCORE:
                    message = (
                        "applying score defaultWeights on PlacementScore plugins: plugin "
                        f'"{pl.name}" returns an invalid score {s.score}, it should in the '
                        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
                    return [], Status(Code.ERROR, (message,), pl.name)
                totals[i] += s.score * weight
        return totals, None

    async def run_pod_group_post_filter(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """RunPodGroupPostFilterPlugins, in profile order: the first Success answers (its
        result and status), as does the first UnschedulableAndUnresolvable (tagged with
        the plugin); the Unschedulable ones' reasons are gathered into one Unschedulable
        status (tagged with the first of them); anything else is an Error naming the
        plugin. Always returns a status, Success included, so its message is kept."""
        start = time.perf_counter()
        reasons: list[str] = []
        rejector = ""
        answer: tuple[PodGroupPostFilterResult | None, Status] | None = None
        for pl in self.post_filter:
            st: Status | None
            try:
                res, st = await pl.pod_group_post_filter(group)
            except Exception as exc:
                self._crashed(plugin=pl.name, point="PodGroupPostFilter", **_where(group.info))
                res, st = None, error(exc)
            if st is None or st.is_success():
                answer = (res, st if st is not None else Status(Code.SUCCESS))
                break
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                answer = (res, st.with_plugin(pl.name))
                break
            if st.code == Code.UNSCHEDULABLE:
                reasons.extend(st.reasons)
                rejector = rejector or pl.name
                continue
            message = f'error in "{pl.name}" PodGroupPostFilter plugins: {st.message()}'
            answer = (None, Status(Code.ERROR, (message,), pl.name, st.error))
            break
        if answer is None:
            answer = (None, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector))
        self._timed("PodGroupPostFilter", answer[1], start)
        return answer


def _where(group: PodGroupInfo) -> dict[str, Any]:
    return {"podgroup": group.pod_group.key}


def _failed(what: str, plugin: str, message: str) -> Status:
    """RunPlacementScorePlugins' wrapped errors: `<what>: plugin "<p>" failed with: ...`."""
    return Status(Code.ERROR, (f'{what}: plugin "{plugin}" failed with: {message}',), plugin)
