"""TaintToleration: filter on NoSchedule/NoExecute taints, score PreferNoSchedule ones."""

from asched.plugins.tainttoleration.taint_toleration import (
    ERR_REASON_UNTOLERATED,
    NAME,
    SPEC,
    TaintToleration,
)

__all__ = ["ERR_REASON_UNTOLERATED", "NAME", "SPEC", "TaintToleration"]
