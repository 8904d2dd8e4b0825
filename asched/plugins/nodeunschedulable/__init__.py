"""NodeUnschedulable: cordoned nodes only take pods that tolerate the cordon."""

from asched.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    SPEC,
    NodeUnschedulable,
)

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NAME", "SPEC", "NodeUnschedulable"]
