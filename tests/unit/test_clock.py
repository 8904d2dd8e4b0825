"""Clock.wait: an event or the clock's deadline, whichever comes first, with no timer task."""

from __future__ import annotations

import gc

import anyio
from anyio.abc import TaskGroup

from asched.base.clock import FakeClock, RealClock


async def _waiting(clock: FakeClock, event: anyio.Event, tg: TaskGroup) -> list[bool]:
    """Start one `clock.wait(event, 5.0)`; its answer lands in the returned list."""
    results: list[bool] = []

    async def waiter() -> None:
        results.append(await clock.wait(event, 5.0))

    tg.start_soon(waiter)
    await anyio.wait_all_tasks_blocked()
    return results


async def test_fake_clock_wait_returns_true_when_the_event_comes_first() -> None:
    clock, event = FakeClock(), anyio.Event()
    async with anyio.create_task_group() as tg:
        results = await _waiting(clock, event, tg)
        assert clock.sleepers == 1
        clock.advance(4.9)
        await anyio.wait_all_tasks_blocked()
        assert results == []
        event.set()
    assert results == [True]
    assert clock.sleepers == 0  # the alarm is over, though its deadline has not come


async def test_fake_clock_wait_returns_false_at_the_deadline() -> None:
    clock, event = FakeClock(), anyio.Event()
    async with anyio.create_task_group() as tg:
        results = await _waiting(clock, event, tg)
        clock.advance(5.0)
    assert results == [False]
    assert clock.sleepers == 0


async def test_an_elapsed_or_answered_wait_returns_at_once() -> None:
    for clock in (FakeClock(), RealClock()):
        assert await clock.wait(anyio.Event(), 0.0) is False
        event = anyio.Event()
        event.set()
        assert await clock.wait(event, 3600.0) is True


async def test_a_real_wait_the_event_ends_leaves_no_cyclic_garbage() -> None:
    """The reason for Clock.wait: a timer task cancelled when the event came left its
    CancelledError, traceback and frames in cycles (docs/benchmarks.md, round fourteen)."""
    clock = RealClock()
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            event = anyio.Event()
            async with anyio.create_task_group() as tg:

                async def waiter(ev: anyio.Event = event) -> None:
                    assert await clock.wait(ev, 3600.0)

                tg.start_soon(waiter)
                await anyio.wait_all_tasks_blocked()
                event.set()
        # The task groups above leave none either: every task ended normally.
        assert gc.collect() == 0
    finally:
        gc.enable()
