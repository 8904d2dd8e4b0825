"""Writes the PodScheduled condition and nominatedNodeName without blocking the cycle.

kube-scheduler patches pod status from its failure handler; asched's scheduling cycle must
not await the network, so updates are queued here and sent by `run()` (owned by the
scheduler's task group; statuspatcher.py). Updates to the same pod coalesce (latest wins),
and a condition that already says the same thing is not written again, so a pod that keeps
failing does not storm the API server.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from asched.api import Pod
from asched.api.meta import rfc3339
from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors
from asched.client.protocol import ApiError, KubeClient
from asched.scheduler.statuspatcher import CoalescingPatcher, PatchNames

log = structlog.get_logger(__name__)

MAX_IN_FLIGHT = 16
# How long a Binding waits for the pod's status patch in flight (before_binding): a
# request on the wire, not one queued in the rate limiter.
IN_FLIGHT_WAIT_SECONDS = 0.05


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


def _bound_first(upd: _Update, error: ApiError) -> bool:
    """A nomination-only patch that reached a pod already bound (before_binding waits for
    asched's own patches in flight, so bound by another binder, e.g. an extender) is
    refused with 422 by ValidatePodStatusUpdate ("may not be set on pods that are already
    bound to a node", ClearingNominatedNodeNameAfterBinding). The pod is bound, which is
    what the nomination announced; nothing was lost."""
    return not upd.condition and error.status == 422 and "already bound" in error.message


class PodStatusWriter:
    def __init__(
        self, client: KubeClient, clock: Clock, errors: UnexpectedErrors | None = None
    ) -> None:
        self._clock = clock
        self._patcher = CoalescingPatcher[_Update](
            client,
            errors,
            PatchNames(
                log, "pod_status_update_failed", "pod_status", "pod_status_update_crashed", "pod"
            ),
            max_in_flight=MAX_IN_FLIGHT,
            render=self._render,
            where=lambda u: f"{u.namespace}/{u.name}",
            moot=_bound_first,
        )
        self._pending = self._patcher.pending

    def set_unschedulable(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None = None
    ) -> None:
        want = ("False", reason, message)
        if pod.scheduled_condition == want and (
            nominated_node_name is None or nominated_node_name == pod.nominated_node_name
        ):
            return
        self._patcher.put(
            pod.uid,
            _Update(
                pod.namespace, pod.name, pod.uid, "False", reason, message, nominated_node_name
            ),
        )

    def set_nominated(self, pod: Pod, node: str) -> None:
        """Patch only `nominatedNodeName` (NominatedNodeNameForExpectation: the binding
        cycle announces the node before waiting at Permit). A pending condition update for
        the pod keeps its condition and takes the new nomination."""
        pending = self._pending.get(pod.uid)
        if pending is not None:
            pending.nominated_node_name = node
            self._patcher.wake()
        else:
            self._patcher.put(
                pod.uid,
                _Update(pod.namespace, pod.name, pod.uid, "", "", "", node, condition=False),
            )

    async def before_binding(self, uid: str) -> None:
        """The pod is about to be bound: drop every update still queued for it, and wait
        for one in flight, so no status patch of an earlier cycle lands after the Binding.

        Such a patch would undo what the Binding wrote: the API server sets PodScheduled
        True when it binds, and a late PodScheduled=False of the attempt before leaves a
        bound pod that says it is unschedulable (Kubernetes' [sig-scheduling] e2e specs
        fail on it: GetPodsScheduled, "PodStatus isn't 'true'"), and it refuses a late
        nominatedNodeName on a bound pod (422, ClearingNominatedNodeNameAfterBinding).
        kube-scheduler never sends one: without SchedulerAsyncAPICalls (off in 1.37) its
        failure handler patches the status before the pod's next cycle can start; with
        them, a binding call overwrites a pending status patch of the same pod
        (APICallRelevances: binding 2 over status patch 1) and waits for one in flight
        (callQueue.merge). Dropping a queued update rather than awaiting it keeps a member
        of a gang from waiting for a rate-limited request before binding (a 50-member
        gang's bindings spread over 19 s at qps 50 when bindingCycle awaited it).

        The wait for a patch in flight is short (IN_FLIGHT_WAIT_SECONDS): enough for a
        patch already on the wire, which is the case the e2e spec hit. A patch still
        waiting for its rate-limit token reserved it before this Binding asks for one, and
        the client's limiter serves reservations in order (asched.client.ratelimit), so it
        goes out first anyway. Waiting for such a patch to finish, behind other gangs'
        Bindings at qps 50, spread one 50-member gang's Bindings over 6.4 s instead of
        1.3 s (tests/integration/test_gang.py, 20 gangs of 50); a 1 s bound still gave 5.2 s."""
        self._pending.pop(uid, None)
        if not await self._patcher.sent(uid, self._clock, IN_FLIGHT_WAIT_SECONDS):
            log.debug("pod_status_patch_still_in_flight_at_binding", uid=uid)

    def forget(self, uid: str) -> None:
        self._pending.pop(uid, None)

    def pending(self) -> int:
        return len(self._pending)

    async def run(self) -> None:
        await self._patcher.run()

    def _render(self, upd: _Update) -> tuple[str, dict[str, object]]:
        status: dict[str, object] = {}
        if upd.condition:
            status["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": upd.status,
                    "reason": upd.reason,
                    "message": upd.message,
                    "lastProbeTime": None,
                    "lastTransitionTime": rfc3339(self._clock.wall()),
                }
            ]
        if upd.nominated_node_name is not None:
            status["nominatedNodeName"] = upd.nominated_node_name or None
        body = {"metadata": {"uid": upd.uid}, "status": status}
        return f"/api/v1/namespaces/{upd.namespace}/pods/{upd.name}/status", body
