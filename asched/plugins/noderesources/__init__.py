"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler plugins/noderesources)."""

from asched.plugins.noderesources.args import (
    BalancedAllocationArgs,
    FitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from asched.plugins.noderesources.balanced_allocation import SPEC as BALANCED_ALLOCATION_SPEC
from asched.plugins.noderesources.balanced_allocation import BalancedAllocation
from asched.plugins.noderesources.fit import SPEC as FIT_SPEC
from asched.plugins.noderesources.fit import Fit

__all__ = [
    "BALANCED_ALLOCATION_SPEC",
    "FIT_SPEC",
    "BalancedAllocation",
    "BalancedAllocationArgs",
    "Fit",
    "FitArgs",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
]
