"""InterPodAffinityArgs: parsed and validated once, when the config is loaded.

Mirrors kube-scheduler's config.InterPodAffinityArgs with v1 defaulting
(hardPodAffinityWeight 1) and validation.ValidateInterPodAffinityArgs
(hardPodAffinityWeight in [0, 100]).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from asched.framework.registry import ArgsError

MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100

_FIELDS = frozenset(
    {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", "apiVersion", "kind"}
)


@dataclass(frozen=True, slots=True)
class Args:
    # Score weight of an existing pod's required affinity term that the incoming pod matches.
    hard_pod_affinity_weight: int = 1
    # Skip existing pods' preferred terms when the incoming pod has no preferred terms.
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        for k in raw:
            if k not in _FIELDS:
                raise ArgsError(f"{path}.{k}", "unknown field")
        kind = raw.get("kind")
        if kind is not None and kind != "InterPodAffinityArgs":
            raise ArgsError(f"{path}.kind", f"expected InterPodAffinityArgs, got {kind!r}")
        weight = raw.get("hardPodAffinityWeight", 1)
        if weight is None:
            weight = 1
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise ArgsError(f"{path}.hardPodAffinityWeight", f"expected an integer, got {weight!r}")
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ArgsError(
                f"{path}.hardPodAffinityWeight",
                f"{weight}: not in valid range "
                f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]",
            )
        ignore = raw.get("ignorePreferredTermsOfExistingPods", False)
        if ignore is None:
            ignore = False
        if not isinstance(ignore, bool):
            raise ArgsError(
                f"{path}.ignorePreferredTermsOfExistingPods", f"expected a boolean, got {ignore!r}"
            )
        return cls(weight, ignore)
