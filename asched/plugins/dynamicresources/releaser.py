"""Unreserve's API writes: take a pod out of its claims' status.reservedFor, and delete
the claim made for its extended resources.

Go's Unreserve patches each claim it reserved at PreBind before it returns. asched's
Unreserve is synchronous and runs inside cycles that must not await the network, so it
queues the write here and `run()` (started by the scheduler's task group, like every
plugin's `run`) sends it. The patch is a strategic-merge delete of the pod's entry (Go's
patch): it needs no fresh copy of the claim and leaves other consumers alone. A failure
is logged and dropped, as Go logs it: the pod's next attempt runs Unreserve again if it
fails again, and the resourceclaim controller drops reservations of deleted pods.
"""

from __future__ import annotations

import anyio
import structlog

from asched.api.dra import ResourceClaim
from asched.api.pod import Pod
from asched.client.protocol import REQUEST_ERRORS, KubeClient, failure_fields, write_target_gone
from asched.plugins.dynamicresources.binding import delete_claim, unreserve_claim

log = structlog.get_logger(__name__)


class ReservationReleaser:
    def __init__(self, client: KubeClient) -> None:
        self._client = client
        # (claim uid, pod uid) -> what to write; a repeated Unreserve coalesces.
        self.pending: dict[tuple[str, str], tuple[ResourceClaim, Pod]] = {}
        # claim uid -> an extended-resource claim to delete (unreserveExtendedResourceClaim).
        self.deleting: dict[str, ResourceClaim] = {}
        self._wake = anyio.Event()

    def put(self, claim: ResourceClaim, pod: Pod) -> None:
        self.pending[(claim.uid, pod.uid)] = (claim, pod)
        self._wake.set()

    def delete(self, claim: ResourceClaim) -> None:
        self.deleting[claim.uid] = claim
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await self.flush()

    async def flush(self) -> None:
        """Send everything queued, one write at a time: Unreserve after PreBind follows
        a failed binding, which is rare, so the writes need no concurrency."""
        while self.pending or self.deleting:
            if self.pending:
                key = next(iter(self.pending))
                claim, pod = self.pending.pop(key)
                await self._write(claim, pod)
            else:
                uid = next(iter(self.deleting))
                await self._delete(self.deleting.pop(uid))

    async def _delete(self, claim: ResourceClaim) -> None:
        try:
            await delete_claim(self._client, claim)
        except REQUEST_ERRORS as exc:
            log.warning("claim_delete_failed", claim=claim.key, **failure_fields(exc))
        else:
            log.debug("claim_deleted", claim=claim.key)

    async def _write(self, claim: ResourceClaim, pod: Pod) -> None:
        try:
            await unreserve_claim(self._client, claim, pod)
        except REQUEST_ERRORS as exc:
            # By its kind (asched.client.protocol.FailureKind): a conflict (the uid
            # precondition) or a 404 means the claim is gone and nothing holds the pod any
            # more; any other failure is logged once with its kind.
            if not write_target_gone(exc):
                log.warning(
                    "claim_unreserve_failed", claim=claim.key, pod=pod.key, **failure_fields(exc)
                )
        else:
            log.debug("claim_unreserved", claim=claim.key, pod=pod.key)
