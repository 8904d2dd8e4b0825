"""Writes native PodGroups' PodGroupInitiallyScheduled condition off the scheduling loop.

kube-scheduler's updatePodGroupCondition, made asynchronous: the group cycle records the
condition it wants and `run()` (in the scheduler's task group) patches it. As in Go:
- a condition that is already True is never turned back to False by a later cycle;
- nothing is written when status, reason, message and observedGeneration are unchanged
  (apimeta.SetStatusCondition reports no change);
- lastTransitionTime moves only when the status flips.
Updates to one group coalesce (latest wins), so a gang that keeps failing costs one patch
per change, not one per cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import anyio
import structlog

from asched.api.workload import INITIALLY_SCHEDULED, NativePodGroup
from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors, report_unexpected
from asched.client.protocol import TRANSPORT_ERRORS, ApiError, KubeClient

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


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PodGroupConditionWriter:
    def __init__(
        self, client: KubeClient, clock: Clock, errors: UnexpectedErrors | None = None
    ) -> None:
        self._client = client
        self._clock = clock
        self._errors = errors
        self._pending: dict[str, _Want] = {}
        # What we last asked for, so a group whose informer copy lags is not re-patched.
        self._written: dict[str, tuple[str, str, str, int]] = {}
        self._wake = anyio.Event()

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
        self._pending[pg.key] = _Want(
            pg.namespace, pg.name, pg.uid, status, reason, message, pg.generation, transition
        )
        self._wake.set()

    def pending(self) -> int:
        return len(self._pending)

    async def run(self) -> None:
        limiter = anyio.Semaphore(MAX_IN_FLIGHT)
        async with anyio.create_task_group() as tg:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self._pending:
                    key = next(iter(self._pending))
                    want = self._pending.pop(key)
                    await limiter.acquire()
                    tg.start_soon(self._send, want, limiter)

    async def _send(self, w: _Want, limiter: anyio.Semaphore) -> None:
        where = f"{w.namespace}/{w.name}"
        try:
            cond: dict[str, object] = {
                "type": INITIALLY_SCHEDULED,
                "status": w.status,
                "reason": w.reason,
                "message": w.message,
                "observedGeneration": w.generation,
            }
            if w.transition:
                cond["lastTransitionTime"] = _rfc3339(self._clock.wall())
            body = {"metadata": {"uid": w.uid}, "status": {"conditions": [cond]}}
            await self._client.request(
                "PATCH",
                f"/apis/scheduling.k8s.io/v1beta1/namespaces/{w.namespace}/podgroups/"
                f"{w.name}/status",
                body=body,
                content_type="application/strategic-merge-patch+json",
            )
        except ApiError as exc:
            self._written.pop(w.uid, None)
            if not (exc.not_found or exc.conflict):
                log.warning("podgroup_status_update_failed", podgroup=where, error=str(exc))
        except TRANSPORT_ERRORS as exc:  # the group's next cycle writes again
            self._written.pop(w.uid, None)
            log.warning("podgroup_status_update_failed", podgroup=where, error=repr(exc))
        except Exception:
            self._written.pop(w.uid, None)
            report_unexpected(
                log, self._errors, "podgroup_status", "podgroup_status_crashed", podgroup=where
            )
        finally:
            limiter.release()
