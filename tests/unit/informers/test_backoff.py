"""Backoff: client-go's reflector delays (0.8 s doubling, jitter, 2 min reset), capped at 30 s."""

from __future__ import annotations

import random

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.informers import Backoff


class FixedRandom(random.Random):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def random(self) -> float:
        return self.value


@pytest.mark.parametrize(
    ("jitter_draw", "expected"),
    [
        pytest.param(0.0, [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0], id="no-jitter-drawn"),
        pytest.param(0.5, [1.2, 2.4, 4.8, 9.6, 19.2, 30.0, 30.0, 30.0], id="half-jitter"),
        pytest.param(
            0.999,
            [1.5992, 3.1984, 6.3968, 12.7936, 25.5872, 30.0, 30.0, 30.0],
            id="full-jitter-still-capped",
        ),
    ],
)
def test_delays_double_and_stay_under_the_cap(jitter_draw: float, expected: list[float]) -> None:
    clock = FakeClock()
    backoff = Backoff(clock, rng=FixedRandom(jitter_draw))

    delays = []
    for _ in expected:
        delays.append(backoff.next_delay())
        clock.advance(1.0)

    assert delays == pytest.approx(expected)


def test_sequence_restarts_after_two_quiet_minutes() -> None:
    clock = FakeClock()
    backoff = Backoff(clock, rng=FixedRandom(0.0))
    assert [backoff.next_delay() for _ in range(3)] == pytest.approx([0.8, 1.6, 3.2])

    clock.advance(119.0)
    assert backoff.next_delay() == pytest.approx(6.4)
    clock.advance(121.0)
    assert backoff.next_delay() == pytest.approx(0.8)


async def test_wait_sleeps_on_the_injected_clock() -> None:
    clock = FakeClock()
    backoff = Backoff(clock, rng=FixedRandom(0.0))
    backoff.next_delay()  # 0.8 used up; the next is 1.6

    async with anyio.create_task_group() as tg:
        tg.start_soon(backoff.wait)
        await anyio.wait_all_tasks_blocked()
        assert clock.sleepers == 1
        clock.advance(1.5)
        await anyio.wait_all_tasks_blocked()
        assert clock.sleepers == 1
        clock.advance(0.1)
    assert clock.sleepers == 0
