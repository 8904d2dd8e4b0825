"""Writes native PodGroups' PodGroupInitiallyScheduled condition off the scheduling loop.

kube-scheduler's updatePodGroupCondition, made asynchronous: the group cycle records the
condition it wants and `run()` (in the scheduler's task group) patches it. As in Go:
- a condition that is already True is never turned back to False by a later cycle;
- nothing is written when status, reason, message and observedGeneration are unchanged
  (apimeta.SetStatusCondition reports no change);
- lastTransitionTime moves only when the status flips.
Updates to one group coalesce (latest wins; the writer loop is statuspatcher.py's, shared
with PodStatusWriter), so a gang that keeps failing costs one patch per change, not one per
cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from asched.api.meta import rfc3339
from asched.api.workload import INITIALLY_SCHEDULED, NativePodGroup
from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors
from asched.client.protocol import KubeClient
from asched.scheduler.statuspatcher import CoalescingPatcher, PatchNames

log = structlog.get_logger(__name__)

MAX_IN_FLIGHT = 8


@dataclass(slots=True, frozen=True)
class _Want:
    namespace: str
    name: str
    uid: str
    status: str
    reason: str
    message: str
    generation: int
    transition: bool  # the status flips: lastTransitionTime is now


class PodGroupConditionWriter:
    def __init__(
        self, client: KubeClient, clock: Clock, errors: UnexpectedErrors | None = None
    ) -> None:
        self._clock = clock
        # What we last asked for, so a group whose informer copy lags is not re-patched.
        self._written: dict[str, tuple[str, str, str, int]] = {}
        self._patcher = CoalescingPatcher[_Want](
            client,
            errors,
            PatchNames(
                log,
                "podgroup_status_update_failed",
                "podgroup_status",
                "podgroup_status_crashed",
                "podgroup",
            ),
            max_in_flight=MAX_IN_FLIGHT,
            render=self._render,
            where=lambda w: f"{w.namespace}/{w.name}",
            # Not written: the group's next cycle writes again.
            on_failure=lambda w: self._written.pop(w.uid, None),
        )

    def set(self, pg: NativePodGroup, status: str, reason: str, message: str) -> None:
        """Record the PodGroupInitiallyScheduled condition the cycle decided on."""
        existing = pg.condition(INITIALLY_SCHEDULED)
        if existing is not None and existing.status == "True" and status != "True":
            return
        want = (status, reason, message, pg.generation)
        if existing is not None and want == (
            existing.status,
            existing.reason,
            existing.message,
            existing.observed_generation,
        ):
            return
        written = self._written.get(pg.uid)
        if written == want:
            return
        if written is not None and written[0] == "True" and status != "True":
            # Our own True may not be in the informer's copy yet. kube-scheduler reads
            # only the informer's and can regress the condition in that window (seen in
            # its follow-up cycle for members beyond minCount); asched keeps it True.
            return
        self._written[pg.uid] = want
        transition = existing is None or existing.status != status
        self._patcher.put(
            pg.key,
            _Want(
                pg.namespace, pg.name, pg.uid, status, reason, message, pg.generation, transition
            ),
        )

    def pending(self) -> int:
        return len(self._patcher.pending)

    async def run(self) -> None:
        await self._patcher.run()

    def _render(self, w: _Want) -> tuple[str, dict[str, object]]:
        cond: dict[str, object] = {
            "type": INITIALLY_SCHEDULED,
            "status": w.status,
            "reason": w.reason,
            "message": w.message,
            "observedGeneration": w.generation,
        }
        if w.transition:
            cond["lastTransitionTime"] = rfc3339(self._clock.wall())
        body = {"metadata": {"uid": w.uid}, "status": {"conditions": [cond]}}
        path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{w.namespace}/podgroups/{w.name}/status"
        return path, body
