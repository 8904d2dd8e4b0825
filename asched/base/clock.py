"""Time, injected: production uses the event loop's clock, tests a fake one they advance.

Everything that waits on time (backoff, Permit timeouts, periodic flushes) goes through a
Clock, so tests check timeouts without real sleeping.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...

    def wall(self) -> float:
        """Seconds since the epoch (for timestamps written to the API)."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    async def wait(self, event: anyio.Event, seconds: float) -> bool:
        """Wait for `event` at most `seconds`; whether it was set.

        One task and no timer task to cancel: a timer task cancelled once the event came
        leaves its CancelledError, traceback and frames behind as cyclic garbage (about
        fifty objects), which a Permit wait per gang member made 12-27 thousand of a
        second (docs/benchmarks.md, round fourteen)."""
        ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(0.0, seconds))

    async def wait(self, event: anyio.Event, seconds: float) -> bool:
        # The scope's deadline is a timer handle on the loop; leaving the scope before it
        # fires cancels the handle and raises nothing.
        with anyio.move_on_after(max(0.0, seconds)):
            await event.wait()
        return event.is_set()


class _Alarm:
    """One wait on a FakeClock: `fire` wakes it; inactive once fired or over."""

    __slots__ = ("active", "fire")

    def __init__(self, fire: Callable[[], object]) -> None:
        self.fire = fire
        self.active = True


class FakeClock:
    """A clock that moves only when a test calls `advance`; sleepers wake in deadline order."""

    def __init__(self, start: float = 1000.0, wall_start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._wall_offset = wall_start - start
        self._sleepers: list[tuple[float, int, _Alarm]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._now + self._wall_offset

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        ev = anyio.Event()
        alarm = self._alarm(seconds, ev.set)
        try:
            await ev.wait()
        finally:
            alarm.active = False

    async def wait(self, event: anyio.Event, seconds: float) -> bool:
        if event.is_set() or seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return event.is_set()
        scope = anyio.CancelScope()
        alarm = self._alarm(seconds, scope.cancel)
        try:
            with scope:
                await event.wait()
        finally:
            alarm.active = False
        return event.is_set()

    def _alarm(self, seconds: float, fire: Callable[[], object]) -> _Alarm:
        alarm = _Alarm(fire)
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), alarm))
        return alarm

    def advance(self, seconds: float) -> None:
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            alarm = heapq.heappop(self._sleepers)[2]
            if alarm.active:
                alarm.active = False
                alarm.fire()

    @property
    def sleepers(self) -> int:
        """Waits on this clock not yet woken or over."""
        return sum(1 for _, _, alarm in self._sleepers if alarm.active)


async def run_within(clock: Clock, seconds: float, work: Callable[[], Awaitable[None]]) -> bool:
    """Run `work` for at most `seconds` of `clock`; True when it finished in time."""
    finished = False
    async with anyio.create_task_group() as tg:

        async def run_work() -> None:
            nonlocal finished
            await work()
            finished = True
            tg.cancel_scope.cancel()

        async def deadline() -> None:
            await clock.sleep(seconds)
            tg.cancel_scope.cancel()

        tg.start_soon(run_work)
        tg.start_soon(deadline)
    return finished
