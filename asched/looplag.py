"""Event-loop lag: how late the loop wakes a task that asked to sleep.

Everything in asched shares one event loop, so a plugin or a decode that holds the loop
delays every other cycle, watch and health probe. The monitor sleeps for a fixed interval
and measures the overshoot: the time the loop spent on other work before it could resume
us. It feeds the `asched_event_loop_lag_seconds` histogram and keeps the last N samples so
benchmarks can read a p99 without scraping.

Time comes from the injected Clock; with a FakeClock the overshoot is whatever the test
advances past the interval.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import NoReturn

import structlog

from asched.base.clock import Clock

log = structlog.get_logger(__name__)


class LoopLagMonitor:
    """Samples event-loop lag every `interval` seconds; run `run()` in a task group."""

    def __init__(
        self,
        clock: Clock,
        *,
        interval: float = 0.1,
        window: int = 1000,
        observe: Callable[[float], None] | None = None,
        warn_after: float = 1.0,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0, got {interval}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self._clock = clock
        self._interval = interval
        self._observe = observe
        self._warn_after = warn_after
        self._samples: deque[float] = deque(maxlen=window)

    async def run(self) -> NoReturn:
        while True:
            start = self._clock.now()
            await self._clock.sleep(self._interval)
            lag = max(0.0, self._clock.now() - start - self._interval)
            self._samples.append(lag)
            if self._observe is not None:
                self._observe(lag)
            if lag >= self._warn_after:
                # A second-long stall delays every watch and probe; name it in the logs so
                # it can be matched with what ran just before.
                log.warning("event_loop_blocked", lag_seconds=round(lag, 3))

    @property
    def samples(self) -> int:
        return len(self._samples)

    def quantile(self, q: float) -> float:
        """The nearest-rank `q` quantile of the kept samples (0.0 before the first one)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile must be within [0, 1], got {q}")
        if not self._samples:
            return 0.0
        ordered = sorted(self._samples)
        rank = max(1, math.ceil(q * len(ordered)))
        return ordered[rank - 1]

    @property
    def p99(self) -> float:
        return self.quantile(0.99)

    @property
    def max(self) -> float:
        return max(self._samples, default=0.0)
