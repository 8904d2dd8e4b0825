"""Capped exponential backoff with jitter for reconnecting informers.

Mirrors client-go's reflector backoff (wait.NewExponentialBackoffManager(800ms, 30s,
2min, 2.0, 1.0)): delays double from 0.8 s, jitter adds up to 100%, and the sequence
starts over once 2 minutes have passed since the last backoff, so a watch that failed
once after hours of health does not inherit old penalties. One deliberate difference: the
cap bounds the jittered delay (client-go's jitter can reach twice the cap), so no informer
ever waits longer than 30 s.
"""

from __future__ import annotations

import random

from asched.base.clock import Clock


class Backoff:
    def __init__(
        self,
        clock: Clock,
        *,
        initial: float = 0.8,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        rng: random.Random | None = None,
    ) -> None:
        self._clock = clock
        self._initial = initial
        self._cap = cap
        self._factor = factor
        self._jitter = jitter
        self._reset_after = reset_after
        self._rng = rng or random.Random()
        self._attempt = 0
        self._last: float | None = None

    def next_delay(self) -> float:
        now = self._clock.now()
        if self._last is not None and now - self._last > self._reset_after:
            self._attempt = 0
        self._last = now
        base = min(self._cap, self._initial * self._factor**self._attempt)
        self._attempt += 1
        return min(self._cap, base * (1.0 + self._jitter * self._rng.random()))

    async def wait(self) -> float:
        """Sleep for the next delay (on the injected clock); returns the delay."""
        delay = self.next_delay()
        await self._clock.sleep(delay)
        return delay
