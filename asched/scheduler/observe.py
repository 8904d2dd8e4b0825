"""What the scheduling and binding cycles tell an observer (the live inspector).

The cycles call these methods on their hot path, so an implementation must only keep
references or small tuples (the cycle's ScoreTable, its FitError) and do any formatting
later, off the cycle. Every method is called on the event loop, never concurrently.
"""

from __future__ import annotations

from typing import Protocol

from asched.api import Pod
from asched.framework.types import QueuedPodInfo, ScoreTable
from asched.scheduler.diagnosis import FitError


class CycleObserver(Protocol):
    def scheduled(
        self,
        pod: Pod,
        profile: str,
        node: str,
        seconds: float,
        scores: tuple[ScoreTable, int] | None,
        *,
        group: str = "",
        hinted: bool = False,
    ) -> None:
        """The pod was assumed on *node* after a cycle of *seconds*; *scores* is the cycle's
        ScoreTable and *node*'s index in it (None when one node was feasible and nothing
        was scored, or when the group cycle placed the pod: then *group* names its
        native PodGroup, namespace/name); *hinted*: opportunistic batching's hint placed
        it, so only that node was evaluated."""
        ...

    def unschedulable(self, qpi: QueuedPodInfo, profile: str, fit: FitError) -> None:
        """No node fits: *fit* holds the per-node statuses of this attempt."""
        ...

    def bound(self, pod: Pod, node: str, seconds: float) -> None:
        """PreBind and Bind took *seconds* and succeeded."""
        ...
