"""Writes the PodScheduled condition and nominatedNodeName without blocking the cycle.

kube-scheduler patches pod status from its failure handler; asched's scheduling cycle must
not await the network, so updates are queued here and sent by `run()` (owned by the
scheduler's task group). Updates to the same pod coalesce (latest wins), and a condition
that already says the same thing is not written again, so a pod that keeps failing does
not storm the API server.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import anyio
import structlog

from asched.api import Pod
from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors, report_unexpected
from asched.client.protocol import TRANSPORT_ERRORS, ApiError, KubeClient

log = structlog.get_logger(__name__)

MAX_IN_FLIGHT = 16


@dataclass(slots=True)
class _Update:
    namespace: str
    name: str
    uid: str
    status: str
    reason: str
    message: str
    nominated_node_name: str | None
    #: False: a nomination-only patch (no PodScheduled condition).
    condition: bool = True


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PodStatusWriter:
    def __init__(
        self, client: KubeClient, clock: Clock, errors: UnexpectedErrors | None = None
    ) -> None:
        self._client = client
        self._clock = clock
        self._errors = errors
        self._pending: dict[str, _Update] = {}
        self._wake = anyio.Event()
        self._closed = False

    def set_unschedulable(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None = None
    ) -> None:
        want = ("False", reason, message)
        if pod.scheduled_condition == want and (
            nominated_node_name is None or nominated_node_name == pod.nominated_node_name
        ):
            return
        self._pending[pod.uid] = _Update(
            pod.namespace, pod.name, pod.uid, "False", reason, message, nominated_node_name
        )
        self._wake.set()

    def set_nominated(self, pod: Pod, node: str) -> None:
        """Patch only `nominatedNodeName` (NominatedNodeNameForExpectation: the binding
        cycle announces the node before waiting at Permit). A pending condition update for
        the pod keeps its condition and takes the new nomination."""
        pending = self._pending.get(pod.uid)
        if pending is not None:
            pending.nominated_node_name = node
        else:
            self._pending[pod.uid] = _Update(
                pod.namespace, pod.name, pod.uid, "", "", "", node, condition=False
            )
        self._wake.set()

    def forget(self, uid: str) -> None:
        self._pending.pop(uid, None)

    def pending(self) -> int:
        return len(self._pending)

    async def run(self) -> None:
        limiter = anyio.Semaphore(MAX_IN_FLIGHT)
        async with anyio.create_task_group() as tg:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self._pending:
                    uid = next(iter(self._pending))
                    upd = self._pending.pop(uid)
                    await limiter.acquire()
                    tg.start_soon(self._send, upd, limiter)

    async def _send(self, upd: _Update, limiter: anyio.Semaphore) -> None:
        try:
            status: dict[str, object] = {}
            if upd.condition:
                status["conditions"] = [
                    {
                        "type": "PodScheduled",
                        "status": upd.status,
                        "reason": upd.reason,
                        "message": upd.message,
                        "lastProbeTime": None,
                        "lastTransitionTime": _rfc3339(self._clock.wall()),
                    }
                ]
            if upd.nominated_node_name is not None:
                status["nominatedNodeName"] = upd.nominated_node_name or None
            body = {"metadata": {"uid": upd.uid}, "status": status}
            await self._client.request(
                "PATCH",
                f"/api/v1/namespaces/{upd.namespace}/pods/{upd.name}/status",
                body=body,
                content_type="application/strategic-merge-patch+json",
            )
        except ApiError as exc:
            if not (exc.not_found or exc.conflict):
                log.warning(
                    "pod_status_update_failed", pod=f"{upd.namespace}/{upd.name}", error=str(exc)
                )
        except TRANSPORT_ERRORS as exc:  # the pod's next failure writes again
            log.warning(
                "pod_status_update_failed", pod=f"{upd.namespace}/{upd.name}", error=repr(exc)
            )
        except Exception:
            # A bug, not the network. Dropped rather than raised: the condition only
            # informs users, and raising would end run() and with it the scheduler.
            report_unexpected(
                log,
                self._errors,
                "pod_status",
                "pod_status_update_crashed",
                pod=f"{upd.namespace}/{upd.name}",
            )
        finally:
            limiter.release()
