"""TokenBucket: client-go flowcontrol semantics, checked on a FakeClock."""

from __future__ import annotations

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.client.ratelimit import TokenBucket


async def _release_times(bucket: TokenBucket, clock: FakeClock, n: int, step: float) -> list[float]:
    """Start *n* acquirers in order, advance the clock by *step* until all went; when each went."""
    went: list[float] = []

    async def one() -> None:
        await bucket.acquire()
        went.append(round(clock.now() - 1000.0, 6))

    async with anyio.create_task_group() as tg:
        for _ in range(n):
            tg.start_soon(one)
            await anyio.wait_all_tasks_blocked()
        while len(went) < n:
            clock.advance(step)
            await anyio.wait_all_tasks_blocked()
    return went


@pytest.mark.parametrize(
    ("qps", "burst", "n", "expected"),
    [
        pytest.param(10.0, 3, 3, [0.0, 0.0, 0.0], id="burst-goes-at-once"),
        pytest.param(10.0, 3, 5, [0.0, 0.0, 0.0, 0.1, 0.2], id="then-qps-pacing"),
        pytest.param(2.0, 1, 3, [0.0, 0.5, 1.0], id="burst-one"),
        pytest.param(0.0, 1, 4, [0.0, 0.0, 0.0, 0.0], id="qps-zero-unlimited"),
        pytest.param(-1.0, 0, 4, [0.0, 0.0, 0.0, 0.0], id="negative-qps-unlimited"),
    ],
)
async def test_acquire_paces_requests(
    qps: float, burst: int, n: int, expected: list[float]
) -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps, burst, clock)

    # A binary-exact step keeps the fake clock's sums exact; each release is seen within it.
    step = 2.0**-10
    went = await _release_times(bucket, clock, n, step=step)

    assert went == pytest.approx(expected, abs=step)


async def test_tokens_refill_at_qps_up_to_burst_only() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, 2, clock)
    assert bucket.try_acquire()
    assert bucket.try_acquire()
    assert not bucket.try_acquire()

    clock.advance(60.0)  # an idle minute refills to burst, not to 600 tokens

    assert [bucket.try_acquire() for _ in range(3)] == [True, True, False]


async def test_cancelled_waiter_gives_its_token_back() -> None:
    clock = FakeClock()
    bucket = TokenBucket(1.0, 1, clock)
    await bucket.acquire()  # the burst token
    with anyio.move_on_after(0):
        await bucket.acquire()  # reserved a token one second out, then cancelled

    clock.advance(1.0)

    assert bucket.try_acquire()


def test_positive_qps_needs_a_burst() -> None:
    with pytest.raises(ValueError, match="burst"):
        TokenBucket(5.0, 0, FakeClock())
