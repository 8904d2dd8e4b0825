"""GangScheduling: all-or-nothing for Kubernetes 1.37's native PodGroups (scheduling.k8s.io)."""

from asched.plugins.gangscheduling.gang_scheduling import (
    NAME,
    PERMIT_TIMEOUT_SECONDS,
    SPEC,
    GangScheduling,
    placement_message,
)

__all__ = ["NAME", "PERMIT_TIMEOUT_SECONDS", "SPEC", "GangScheduling", "placement_message"]
