"""Leader election on a coordination.k8s.io/v1 Lease, so only one replica schedules.

Two schedulers binding from different caches race for the same capacity; replicas for
availability must therefore take turns. This mirrors client-go's
tools/leaderelection (leaderelection.go with the Lease lock), which kube-scheduler uses:

- A candidate takes the Lease when nobody holds it, when it is ours, or when the holder
  has not renewed it for `leaseDurationSeconds`. Like client-go, expiry is judged on the
  local clock from the moment this process last saw the Lease record change, never from
  the renewTime written by another machine, so clock skew between nodes does not matter.
- Writes are optimistic: PUT with the resourceVersion last read; a 409 means another
  candidate won the race. The leader renews with the Lease it wrote last (the fast path)
  and reads it again only when that fails.
- The leader renews every `retry_period`. If renewing keeps failing for `renew_deadline`,
  it gives up: the leading work is cancelled and `run()` raises LeadershipLost, so the
  process exits and restarts as kube-scheduler does. Each renewal is bounded by the
  deadline even if a request hangs.
- On a clean stop the Lease is released (holderIdentity empty, leaseDurationSeconds 1),
  as client-go's ReleaseOnCancel does, so a standby takes over at once.
- Candidates retry every retry_period with client-go's jitter (up to 1.2 x retry_period
  more), so standbys do not hit the API server in lockstep.

Time comes from the injected Clock; tests run two electors on one FakeClock.
"""

from __future__ import annotations

import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import anyio
import structlog

from asched.api.meta import micro_time
from asched.base.clock import Clock, RealClock, run_within
from asched.base.errors import UnexpectedErrors, report_unexpected
from asched.client.protocol import (
    REQUEST_ERRORS,
    TRANSPORT_ERRORS,
    ApiError,
    KubeClient,
    failure_fields,
)

log = structlog.get_logger(__name__)

# client-go's JitterFactor: acquisition retries wait retry_period * (1 + rand * 1.2).
JITTER_FACTOR = 1.2


class LeadershipLost(Exception):
    """Renewing the Lease failed for longer than the renew deadline."""


def default_identity() -> str:
    """kube-scheduler's identity: hostname, underscore, a fresh UUID."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(slots=True, frozen=True)
class LeaderElectionRecord:
    """A Lease's spec as client-go's resourcelock sees it."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: str
    renew_time: str
    lease_transitions: int

    @classmethod
    def from_lease(cls, lease: Any) -> LeaderElectionRecord:
        spec = (lease.get("spec") or {}) if isinstance(lease, dict) else {}
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


class LeaderElector:
    """Campaigns for a Lease and runs the leading work while holding it."""

    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str = "kube-system",
        name: str = "kube-scheduler",
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Clock | None = None,
        release_on_cancel: bool = True,
        rng: random.Random | None = None,
        errors: UnexpectedErrors | None = None,
    ) -> None:
        # The same checks as client-go's NewLeaderElector.
        if retry_period <= 0 or renew_deadline <= 0 or lease_duration < 1:
            raise ValueError("lease_duration >= 1s, renew_deadline and retry_period > 0")
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renew_deadline must be greater than retry_period * 1.2")
        self._client = client
        self._namespace = namespace
        self._name = name
        self._identity = identity or default_identity()
        self._lease_duration = lease_duration
        self._renew_deadline = renew_deadline
        self._retry_period = retry_period
        self._clock: Clock = clock or RealClock()
        self._release_on_cancel = release_on_cancel
        self._rng = rng or random.Random()
        self._errors = errors
        self._collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._path = f"{self._collection}/{name}"
        # The Lease's metadata as last read or written: its resourceVersion makes the next
        # write conditional, and labels or annotations others set survive our PUTs.
        self._metadata: dict[str, Any] | None = None
        self._observed: LeaderElectionRecord | None = None
        self._observed_time = 0.0
        self._reported_leader = ""
        self._leading = False

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def is_leader(self) -> bool:
        """True while this process holds the Lease and runs the leading work."""
        return self._leading and self._observed_is_us()

    @property
    def leader(self) -> str:
        """The holder last observed ("" when none)."""
        return self._observed.holder_identity if self._observed else ""

    def healthy(self, tolerance: float = 20.0) -> tuple[bool, str]:
        """client-go's HealthzAdaptor check: a leader that has not renewed for
        lease_duration + tolerance is stuck and should be restarted."""
        if not self.is_leader:
            return True, ""
        since = self._clock.now() - self._observed_time
        if since > self._lease_duration + tolerance:
            return False, f"failed election to renew leadership on lease {self._name}"
        return True, ""

    # ---- the campaign -------------------------------------------------------------------

    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None:
        """Block until elected, then run `on_started_leading` while renewing.

        Returns when the leading work returns (after releasing the Lease). Raises
        LeadershipLost, with the work cancelled, when renewing fails past the deadline.
        """
        await self._acquire()
        self._leading = True
        lost = False
        try:
            async with anyio.create_task_group() as tg:

                async def lead() -> None:
                    await on_started_leading()
                    tg.cancel_scope.cancel()  # the work is done: stop renewing

                tg.start_soon(lead)
                await self._renew_until_failure()
                lost = True
                tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # Only the leading work can fail here; hand its error to the caller unwrapped.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            self._leading = False
            if not lost and self._release_on_cancel:
                with anyio.CancelScope(shield=True):
                    await run_within(self._clock, self._renew_deadline, self._release)
        if lost:
            log.error("leader_election_lost", lease=self._describe(), identity=self._identity)
            raise LeadershipLost(f"failed to renew lease {self._describe()}")

    async def _acquire(self) -> None:
        log.info("leader_election_started", lease=self._describe(), identity=self._identity)
        while not await self._try_acquire_or_renew():
            jitter = self._rng.random() * JITTER_FACTOR * self._retry_period
            await self._clock.sleep(self._retry_period + jitter)
        log.info("leader_elected", lease=self._describe(), identity=self._identity)

    async def _renew_until_failure(self) -> None:
        async def renew() -> None:
            # Retry within the deadline, every retry_period (PollImmediateUntil).
            while not await self._try_acquire_or_renew():
                await self._clock.sleep(self._retry_period)

        while True:
            await self._clock.sleep(self._retry_period)
            if not await run_within(self._clock, self._renew_deadline, renew):
                return

    async def _try_acquire_or_renew(self) -> bool:
        wall = self._clock.wall()
        desired = LeaderElectionRecord(
            holder_identity=self._identity,
            lease_duration_seconds=int(self._lease_duration),
            acquire_time=micro_time(wall),
            renew_time=micro_time(wall),
            lease_transitions=0,
        )
        # 1. Fast path: the leader updates the Lease it wrote last, assuming nobody else did.
        if self._observed is not None and self._observed_is_us() and self._lease_valid():
            renewed = replace(
                desired,
                acquire_time=self._observed.acquire_time,
                lease_transitions=self._observed.lease_transitions,
            )
            if await self._update(renewed):
                return True
            log.info("lease_renew_fast_path_failed", lease=self._describe())

        # 2. Read the Lease, creating it when it does not exist.
        try:
            lease = await self._client.request("GET", self._path)
        except ApiError as err:
            if not err.not_found:
                log.warning("lease_get_failed", lease=self._describe(), **_describe_error(err))
                return False
            return await self._create(desired)
        except TRANSPORT_ERRORS as err:
            log.warning("lease_get_failed", lease=self._describe(), **_describe_error(err))
            return False
        except Exception:
            self._crashed("lease_get_crashed")
            return False
        self._metadata = _metadata(lease)
        current = LeaderElectionRecord.from_lease(lease)

        # 3. Judge expiry by when we saw the record change, not by its timestamps.
        if current != self._observed:
            self._set_observed(current)
        if current.holder_identity and self._lease_valid() and not self._observed_is_us():
            return False

        # 4. Take or keep it.
        if self._observed_is_us():
            desired = replace(
                desired,
                acquire_time=current.acquire_time,
                lease_transitions=current.lease_transitions,
            )
        else:
            desired = replace(desired, lease_transitions=current.lease_transitions + 1)
        return await self._update(desired)

    async def _create(self, record: LeaderElectionRecord) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": record.to_spec(),
        }
        try:
            lease = await self._client.request("POST", self._collection, body=body)
        except REQUEST_ERRORS as err:
            # 409 included: another candidate created it first; the next try reads it.
            log.warning("lease_create_failed", lease=self._describe(), **_describe_error(err))
            return False
        except Exception:
            self._crashed("lease_create_crashed")
            return False
        self._metadata = _metadata(lease)
        self._set_observed(record)
        return True

    async def _update(self, record: LeaderElectionRecord) -> bool:
        if self._metadata is None:
            return False
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": self._metadata,
            "spec": record.to_spec(),
        }
        try:
            lease = await self._client.request("PUT", self._path, body=body)
        except REQUEST_ERRORS as err:
            # A 409 means the Lease changed since we read it: someone else wrote first.
            log.warning("lease_update_failed", lease=self._describe(), **_describe_error(err))
            return False
        except Exception:
            self._crashed("lease_update_crashed")
            return False
        self._metadata = _metadata(lease)
        self._set_observed(record)
        return True

    async def _release(self) -> None:
        if self._observed is None or not self._observed_is_us():
            return
        wall = self._clock.wall()
        released = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=micro_time(wall),
            renew_time=micro_time(wall),
            lease_transitions=self._observed.lease_transitions,
        )
        if await self._update(released):
            log.info("leader_lease_released", lease=self._describe())
            return
        # A renewal cancelled mid-flight may have reached the server after all, leaving
        # our resourceVersion stale (409). Read the Lease once and, if it is still ours,
        # release that version.
        try:
            lease = await self._client.request("GET", self._path)
        except REQUEST_ERRORS as err:
            log.warning("lease_release_failed", lease=self._describe(), **_describe_error(err))
            return
        current = LeaderElectionRecord.from_lease(lease)
        if current.holder_identity != self._identity:
            return
        self._metadata = _metadata(lease)
        released = replace(released, lease_transitions=current.lease_transitions)
        if await self._update(released):
            log.info("leader_lease_released", lease=self._describe(), retried=True)

    # ---- observation --------------------------------------------------------------------

    def _observed_is_us(self) -> bool:
        return self._observed is not None and self._observed.holder_identity == self._identity

    def _lease_valid(self) -> bool:
        if self._observed is None:
            return False
        expires = self._observed_time + self._observed.lease_duration_seconds
        return expires > self._clock.now()

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_time = self._clock.now()
        if record.holder_identity != self._reported_leader:
            self._reported_leader = record.holder_identity
            log.info("new_leader_observed", lease=self._describe(), leader=record.holder_identity)

    def _describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    def _crashed(self, event: str) -> None:
        # A bug, not the network: logged with its stack and counted, then treated as a
        # failed try. The loop keeps going rather than raising: while leading, a bug that
        # persists fails every renewal, so leadership is lost within renew_deadline and
        # the process restarts (the outcome client-go gives any error); a bug that passes
        # costs one retry_period. Raising at once would skip releasing the Lease.
        report_unexpected(log, self._errors, "leader_election", event, lease=self._describe())


def _metadata(lease: Any) -> dict[str, Any]:
    meta = lease.get("metadata") if isinstance(lease, dict) else None
    return dict(meta) if isinstance(meta, dict) else {}


def _describe_error(err: Exception) -> dict[str, str]:
    return failure_fields(err)
