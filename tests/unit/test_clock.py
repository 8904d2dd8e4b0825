"""Clock.wait: an event or the clock's deadline, whichever comes first, with no timer task."""

from __future__ import annotations

import gc
import types

import anyio
from anyio.abc import TaskGroup

from asched.base import clock as clock_module
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
    CancelledError, traceback and frames in cycles (docs/benchmarks.md, round fourteen).

    Only the waits' own garbage is counted: in the full suite, threads and tasks that
    earlier tests left running can make cycles of their own while the collector is off
    (a CI run once found 4 unrelated objects)."""
    clock = RealClock()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(50):
            event = anyio.Event()
            async with anyio.create_task_group() as tg:

                async def waiter(ev: anyio.Event = event) -> None:
                    assert await clock.wait(ev, 3600.0)

                tg.start_soon(waiter)
                await anyio.wait_all_tasks_blocked()
                event.set()
        gc.collect()
        # The task groups above leave none either: every task ended normally.
        ours = [obj for obj in gc.garbage if _from_the_waits(obj)]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _from_the_waits(obj: object) -> bool:
    """Whether a collected object is what a wait, its task or its task group left."""
    if isinstance(obj, BaseException | types.TracebackType):
        return True
    if isinstance(obj, types.FrameType):
        return obj.f_code.co_filename in {__file__, clock_module.__file__}
    return isinstance(obj, anyio.Event | anyio.CancelScope | TaskGroup)
