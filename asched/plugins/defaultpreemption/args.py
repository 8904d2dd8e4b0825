"""DefaultPreemptionArgs: how many nodes preemption dry-runs before it picks one.

Mirrors kube-scheduler's v1 defaulting (SetDefaults_DefaultPreemptionArgs: 10% and 100)
and ValidateDefaultPreemptionArgs: the percentage in [0, 100], the absolute number
non-negative, and not both zero. The first problem is raised with its field path and
upstream's message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from asched.framework.registry import ArgsError
from asched.plugins.helpers import check_fields, field_path, read_int

PERCENTAGE = "minCandidateNodesPercentage"
ABSOLUTE = "minCandidateNodesAbsolute"


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, (PERCENTAGE, ABSOLUTE), path)
        pct = read_int(raw, PERCENTAGE, path, 10)
        absolute = read_int(raw, ABSOLUTE, path, 100)
        if not 0 <= pct <= 100:
            raise ArgsError(
                field_path(path, PERCENTAGE), f"Invalid value: {pct}: not in valid range [0, 100]"
            )
        if absolute < 0:
            raise ArgsError(
                field_path(path, ABSOLUTE),
                f"Invalid value: {absolute}: not in valid range [0, inf)",
            )
        if pct == 0 and absolute == 0:
            raise ArgsError(
                field_path(path, PERCENTAGE),
                f"Invalid value: 0: cannot be zero at the same time as {ABSOLUTE}",
            )
        return cls(pct, absolute)

    def num_candidates(self, num_nodes: int) -> int:
        """How many candidates to find among `num_nodes` (upstream calculateNumCandidates)."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)


Args = DefaultPreemptionArgs
