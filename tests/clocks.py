"""Clocks for unit tests beside asched.base.clock.FakeClock."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio


@dataclass
class JumpingClock:
    """A Clock whose sleeps end at once, moving its time on by their length: the retries'
    waits are checked without taking any real time."""

    t: float = 1000.0
    slept: list[float] = field(default_factory=list)

    def now(self) -> float:
        return self.t

    def wall(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += max(0.0, seconds)
        await anyio.lowlevel.checkpoint()

    async def wait(self, event: anyio.Event, seconds: float) -> bool:
        if not event.is_set():
            await self.sleep(seconds)
        return event.is_set()
