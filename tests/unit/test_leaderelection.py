"""LeaderElector: client-go's Lease state machine on a FakeClock and an in-memory Lease API."""

from __future__ import annotations

import copy
import random
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.client.protocol import ApiError
from asched.leaderelection import LeaderElector, LeadershipLost, micro_time

NS, NAME = "asched-system", "asched"
COLLECTION = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
PATH = f"{COLLECTION}/{NAME}"


class LeaseStore:
    """One Lease with the API server's optimistic concurrency: PUT must carry the current
    resourceVersion (409 otherwise), POST fails with 409 when the Lease exists."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.writes: list[tuple[str, str]] = []  # (method, holderIdentity)

    def handle(self, method: str, path: str, body: Any) -> Any:
        if method == "GET" and path == PATH:
            if self.lease is None:
                raise ApiError(404, "NotFound", "no lease", method, path)
            return copy.deepcopy(self.lease)
        if method == "POST" and path == COLLECTION:
            if self.lease is not None:
                raise ApiError(409, "AlreadyExists", "exists", method, path)
            return self._store(method, body)
        if method == "PUT" and path == PATH:
            if self.lease is None:
                raise ApiError(404, "NotFound", "no lease", method, path)
            if body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", "the object has been modified", method, path)
            return self._store(method, body)
        raise AssertionError(f"unexpected {method} {path}")

    def _store(self, method: str, body: Any) -> Any:
        self.version += 1
        lease = copy.deepcopy(body)
        lease["metadata"]["resourceVersion"] = str(self.version)
        self.lease = lease
        self.writes.append((method, lease["spec"]["holderIdentity"]))
        return copy.deepcopy(lease)

    @property
    def spec(self) -> dict[str, Any]:
        assert self.lease is not None
        spec: dict[str, Any] = self.lease["spec"]
        return spec


class LeaseClient:
    """One candidate's connection to the shared store; `down` makes its requests fail."""

    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self.down = False
        self.hang = False

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        await anyio.lowlevel.checkpoint()
        if self.hang:
            await anyio.sleep_forever()
        if self.down:
            raise OSError("connection refused")
        return self.store.handle(method, path, body)

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None


class NoJitter(random.Random):
    def random(self) -> float:
        return 0.0


def make_elector(
    client: LeaseClient, clock: FakeClock, identity: str, **overrides: Any
) -> LeaderElector:
    options: dict[str, Any] = {
        "namespace": NS,
        "name": NAME,
        "identity": identity,
        "lease_duration": 15.0,
        "renew_deadline": 10.0,
        "retry_period": 2.0,
        "clock": clock,
        "rng": NoJitter(),
    }
    options.update(overrides)
    return LeaderElector(client, **options)


class Work:
    """The leading work: records that it started and whether it was cancelled."""

    def __init__(self) -> None:
        self.started = False
        self.cancelled = False
        self.finish = anyio.Event()

    async def __call__(self) -> None:
        self.started = True
        try:
            await self.finish.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise


async def settle() -> None:
    """Let every task run until all wait. The checkpoints first do the work cheaply;
    wait_all_tasks_blocked then confirms it (it sleeps 0.1 s whenever a task is runnable)."""
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    await anyio.wait_all_tasks_blocked()


async def run_for(clock: FakeClock, seconds: float, step: float = 0.5) -> None:
    """Advance the fake clock by `seconds` in steps, letting every task react to each step."""
    await settle()
    for _ in range(round(seconds / step)):
        clock.advance(step)
        await settle()


async def run_expecting_loss(elector: LeaderElector, work: Work, lost: list[str]) -> None:
    try:
        await elector.run(work)
    except LeadershipLost as err:
        lost.append(str(err))


# ---- acquiring ---------------------------------------------------------------------------


async def test_first_candidate_creates_the_lease_and_leads() -> None:
    store, clock = LeaseStore(), FakeClock()
    elector = make_elector(LeaseClient(store), clock, "a")
    work = Work()

    async with anyio.create_task_group() as tg:
        tg.start_soon(elector.run, work)
        await settle()
        leading = (work.started, elector.is_leader, elector.leader)
        spec = dict(store.spec)
        tg.cancel_scope.cancel()

    assert leading == (True, True, "a")
    assert store.writes[0] == ("POST", "a")
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "leaseTransitions": 0,
        "acquireTime": micro_time(clock.wall()),
        "renewTime": micro_time(clock.wall()),
    }


async def test_of_two_candidates_one_leads_and_the_other_stands_by() -> None:
    store, clock = LeaseStore(), FakeClock()
    a = make_elector(LeaseClient(store), clock, "a")
    b = make_elector(LeaseClient(store), clock, "b")
    work_a, work_b = Work(), Work()

    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, work_a)
        tg.start_soon(b.run, work_b)
        await run_for(clock, 60.0)  # many renewals; the standby never gets in
        state = (work_a.started, work_b.started, a.is_leader, b.is_leader, b.leader)
        spec, holders = dict(store.spec), {holder for _, holder in store.writes}
        tg.cancel_scope.cancel()

    assert state == (True, False, True, False, "a")
    assert holders == {"a"}
    assert spec["renewTime"] == micro_time(clock.wall())
    assert spec["acquireTime"] == micro_time(clock.wall() - 60.0)


async def test_a_candidate_respects_a_lease_held_by_another_until_it_expires() -> None:
    store, clock = LeaseStore(), FakeClock()
    # Somebody else holds the lease and then stops renewing (e.g. their node died).
    store.handle(
        "POST",
        COLLECTION,
        {
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {
                "holderIdentity": "gone",
                "leaseDurationSeconds": 15,
                "acquireTime": micro_time(0),
                "renewTime": micro_time(0),
                "leaseTransitions": 4,
            },
        },
    )
    elector = make_elector(LeaseClient(store), clock, "b")
    work = Work()

    async with anyio.create_task_group() as tg:
        tg.start_soon(elector.run, work)
        await run_for(clock, 14.0)
        before_expiry = work.started
        await run_for(clock, 4.0)
        after_expiry = work.started
        spec = dict(store.spec)
        tg.cancel_scope.cancel()

    # Expiry counts from when *we* first saw the record, not from its renewTime (1970 here).
    assert (before_expiry, after_expiry) == (False, True)
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 5)


# ---- losing and handing over -------------------------------------------------------------


async def test_leader_that_cannot_renew_stops_and_the_standby_takes_over() -> None:
    store, clock = LeaseStore(), FakeClock()
    client_a = LeaseClient(store)
    a = make_elector(client_a, clock, "a")
    b = make_elector(LeaseClient(store), clock, "b")
    work_a, work_b = Work(), Work()
    lost: list[str] = []

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_expecting_loss, a, work_a, lost)
        await settle()
        tg.start_soon(b.run, work_b)
        await run_for(clock, 4.0)
        client_a.down = True  # a is cut off from the API server
        await run_for(clock, 13.0)  # next renewal at +2 s, then the 10 s renew deadline
        a_gave_up = (lost[:], work_a.cancelled, a.is_leader, work_b.started)
        await run_for(clock, 8.0)  # b saw the last renewal at ~4 s; 15 s later it is free
        b_took_over = (work_b.started, b.is_leader)
        spec = dict(store.spec)
        tg.cancel_scope.cancel()

    assert a_gave_up == ([f"failed to renew lease {NS}/{NAME}"], True, False, False)
    assert b_took_over == (True, True)
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)


async def test_a_hanging_renewal_is_bounded_by_the_renew_deadline() -> None:
    store, clock = LeaseStore(), FakeClock()
    client = LeaseClient(store)
    elector = make_elector(client, clock, "a")
    work = Work()
    lost: list[str] = []

    # A real-time guard only: without the deadline this test would hang, not fail.
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_expecting_loss, elector, work, lost)
            await settle()
            client.hang = True
            await run_for(clock, 2.0 + 10.0)
            tg.cancel_scope.cancel()

    assert lost == [f"failed to renew lease {NS}/{NAME}"]
    assert work.cancelled


async def test_work_that_finishes_releases_the_lease_for_a_quick_handover() -> None:
    store, clock = LeaseStore(), FakeClock()
    a = make_elector(LeaseClient(store), clock, "a")
    b = make_elector(LeaseClient(store), clock, "b")
    work_a, work_b = Work(), Work()

    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, work_a)
        await settle()
        tg.start_soon(b.run, work_b)
        await run_for(clock, 3.0)
        work_a.finish.set()
        await settle()
        released = (store.spec["holderIdentity"], store.spec["leaseDurationSeconds"], a.is_leader)
        await run_for(clock, 4.0)  # b's next retry sees a lease that expired after 1 s
        holder = store.spec["holderIdentity"]
        tg.cancel_scope.cancel()

    assert released == ("", 1, False)
    assert work_b.started
    assert holder == "b"


@pytest.mark.parametrize(
    ("release_on_cancel", "expected_holder"),
    [
        pytest.param(True, "", id="release-on-cancel"),
        pytest.param(False, "a", id="keep-until-expiry"),
    ],
)
async def test_cancelled_leader_releases_only_when_asked(
    release_on_cancel: bool, expected_holder: str
) -> None:
    store, clock = LeaseStore(), FakeClock()
    a = make_elector(LeaseClient(store), clock, "a", release_on_cancel=release_on_cancel)

    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, Work())
        await settle()
        tg.cancel_scope.cancel()

    assert store.spec["holderIdentity"] == expected_holder


async def test_release_after_a_renewal_that_landed_unseen_still_hands_the_lease_back() -> None:
    # A renewal cancelled by shutdown may reach the server after all: the Lease's
    # resourceVersion moves on without the elector seeing it, and its release PUT gets 409.
    store, clock = LeaseStore(), FakeClock()
    a = make_elector(LeaseClient(store), clock, "a")

    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, Work())
        await settle()
        assert store.lease is not None
        store.handle("PUT", PATH, copy.deepcopy(store.lease))  # same holder, newer version
        tg.cancel_scope.cancel()

    assert store.spec["holderIdentity"] == ""
    assert store.spec["leaseDurationSeconds"] == 1


async def test_a_write_with_a_stale_resource_version_loses_the_race() -> None:
    store, clock = LeaseStore(), FakeClock()
    a = make_elector(LeaseClient(store), clock, "a")
    work = Work()

    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run, work)
        await settle()
        # Another candidate writes between a's renewals; a's next PUT carries an old version.
        assert store.lease is not None
        store.handle(
            "PUT",
            PATH,
            {
                **store.lease,
                "spec": {
                    **store.spec,
                    "holderIdentity": "intruder",
                    "leaseTransitions": 1,
                },
            },
        )
        await run_for(clock, 2.0)
        after_conflict = (a.is_leader, a.leader)
        tg.cancel_scope.cancel()

    assert after_conflict == (False, "intruder")
    assert store.spec["holderIdentity"] == "intruder"


# ---- configuration and health --------------------------------------------------------------


@pytest.mark.parametrize(
    ("lease_duration", "renew_deadline", "retry_period", "message"),
    [
        pytest.param(
            10.0, 10.0, 2.0, "lease_duration must be greater", id="deadline-not-below-lease"
        ),
        pytest.param(15.0, 2.0, 2.0, "retry_period \\* 1.2", id="retry-too-close-to-deadline"),
        pytest.param(15.0, 10.0, 0.0, "> 0", id="zero-retry"),
    ],
)
def test_timing_is_validated_like_client_go(
    lease_duration: float, renew_deadline: float, retry_period: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make_elector(
            LeaseClient(LeaseStore()),
            FakeClock(),
            "a",
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
        )


async def test_health_fails_when_a_leader_is_stuck_past_lease_and_tolerance() -> None:
    store, clock = LeaseStore(), FakeClock()
    client = LeaseClient(store)
    # An elector whose renewal loop is stuck (the request hangs, no deadline fires because
    # the test never advances past it): health must still notice.
    elector = make_elector(client, clock, "a")

    async with anyio.create_task_group() as tg:
        tg.start_soon(elector.run, Work())
        await settle()
        healthy_at_start = elector.healthy(tolerance=20.0)
        client.hang = True
        clock.advance(2.0)  # the renewal starts and hangs
        await settle()
        clock.advance(34.0)  # time passes without the loop reacting (a deadlock)
        unhealthy = elector.healthy(tolerance=20.0)
        client.hang = False  # let the release on cancel go through
        tg.cancel_scope.cancel()

    assert healthy_at_start == (True, "")
    assert unhealthy == (False, f"failed election to renew leadership on lease {NAME}")
