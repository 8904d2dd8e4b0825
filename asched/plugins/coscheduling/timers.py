"""Deadlines on the injected clock, fired in order by one coroutine.

The gang manager must act when time passes with no pod event to wake it: a group's backoff
ends (its members are activated) or a reservation gate outlives its holder's timeout (it is
taken back). `add()` is synchronous and may be called from the scheduling cycle; `run()`
sleeps until the earliest deadline, waking early when an earlier one is added, and calls
`fire(kind, key, token)` for each. `fire_due()` does the same once, for tests and callers
that poll. A FakeClock drives it without real waiting.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import anyio

from asched.base.clock import Clock


class Timers:
    def __init__(self, clock: Clock, fire: Callable[[str, str, int], None]) -> None:
        self._clock = clock
        self._fire = fire
        self._heap: list[tuple[float, int, str, str, int]] = []
        self._seq = itertools.count()
        # Created by run(): an anyio Event needs a running event loop.
        self._changed: anyio.Event | None = None

    def add(self, when: float, kind: str, key: str, token: int = 0) -> None:
        heapq.heappush(self._heap, (when, next(self._seq), kind, key, token))
        if self._changed is not None:
            self._changed.set()

    def next_deadline(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)

    def fire_due(self) -> None:
        now = self._clock.now()
        while self._heap and self._heap[0][0] <= now:
            _, _, kind, key, token = heapq.heappop(self._heap)
            self._fire(kind, key, token)

    async def run(self) -> None:
        while True:
            self._changed = changed = anyio.Event()
            self.fire_due()
            when = self.next_deadline()
            if when is None:
                await changed.wait()
            else:
                await self._clock.wait(changed, when - self._clock.now())
