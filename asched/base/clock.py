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


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock that moves only when a test calls `advance`; sleepers wake in deadline order."""

    def __init__(self, start: float = 1000.0, wall_start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._wall_offset = wall_start - start
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
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
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), ev))
        await ev.wait()

    def advance(self, seconds: float) -> None:
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            heapq.heappop(self._sleepers)[2].set()

    @property
    def sleepers(self) -> int:
        return sum(1 for _, _, ev in self._sleepers if not ev.is_set())


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
