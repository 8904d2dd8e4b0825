"""Event-loop lag: how late the loop wakes a task that asked to sleep.

Everything in asched shares one event loop, so a plugin or a decode that holds the loop
delays every other cycle, watch and health probe. The monitor sleeps for a fixed interval
and measures the overshoot: the time the loop spent on other work before it could resume
us. It feeds the `asched_event_loop_lag_seconds` histogram and keeps the last N samples so
benchmarks can read a p99 without scraping.

On a machine where the scheduler shares few cores with busy neighbours (a kube-apiserver,
etcd, kwok), much of that overshoot is not asched's: the kernel left the loop's thread
runnable but off the CPU. Linux counts that time per thread (schedstat's run delay), so
each sample also gives the lag net of it, `asched_event_loop_lag_net_seconds`: the part
that asched's own work held the loop, which is what a slow plugin or decode would show.

Time comes from the injected Clock; with a FakeClock the overshoot is whatever the test
advances past the interval, and the CPU-wait reader is injected too.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import NoReturn

import structlog

from asched.base.clock import Clock

log = structlog.get_logger(__name__)

_SCHEDSTAT = "/proc/thread-self/schedstat"


def thread_cpu_wait() -> float | None:
    """Seconds the calling thread has spent runnable but waiting for a CPU, or None where
    the kernel does not say (not Linux, or schedstats off).

    /proc/thread-self/schedstat is "<on-CPU ns> <run-queue wait ns> <timeslices>". It is
    served from kernel memory: a few microseconds, no disk, so reading it on the loop is
    not blocking I/O.
    """
    try:
        with open(_SCHEDSTAT, "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class LoopLagMonitor:
    """Samples event-loop lag every `interval` seconds; run `run()` in a task group."""

    def __init__(
        self,
        clock: Clock,
        *,
        interval: float = 0.1,
        window: int = 1000,
        observe: Callable[[float], None] | None = None,
        observe_net: Callable[[float], None] | None = None,
        cpu_wait: Callable[[], float | None] | None = thread_cpu_wait,
        warn_after: float = 1.0,
        on_tick: Callable[[], None] | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0, got {interval}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self._clock = clock
        self._interval = interval
        self._observe = observe
        self._observe_net = observe_net
        self._cpu_wait = cpu_wait
        self._warn_after = warn_after
        # Called after every sample: a cheap periodic hook on the loop (the app hands
        # the garbage collector's pause records to the metrics there).
        self._on_tick = on_tick
        self._samples: deque[float] = deque(maxlen=window)
        self._net_samples: deque[float] = deque(maxlen=window)

    async def run(self) -> NoReturn:
        while True:
            waited0 = self._cpu_wait() if self._cpu_wait is not None else None
            start = self._clock.now()
            await self._clock.sleep(self._interval)
            lag = max(0.0, self._clock.now() - start - self._interval)
            self._samples.append(lag)
            if self._observe is not None:
                self._observe(lag)
            waited1 = self._cpu_wait() if waited0 is not None and self._cpu_wait else None
            if waited0 is not None and waited1 is not None:
                # Off-CPU time anywhere in the interval may or may not have delayed this
                # wakeup, so the net lag is a lower bound of what the loop's work held it.
                net = max(0.0, lag - max(0.0, waited1 - waited0))
                self._net_samples.append(net)
                if self._observe_net is not None:
                    self._observe_net(net)
            if lag >= self._warn_after:
                # A second-long stall delays every watch and probe; name it in the logs so
                # it can be matched with what ran just before.
                log.warning("event_loop_blocked", lag_seconds=round(lag, 3))
            if self._on_tick is not None:
                self._on_tick()

    @property
    def samples(self) -> int:
        return len(self._samples)

    def quantile(self, q: float) -> float:
        """The nearest-rank `q` quantile of the kept samples (0.0 before the first one)."""
        return _nearest_rank(self._samples, q)

    @property
    def p99(self) -> float:
        return self.quantile(0.99)

    def net_quantile(self, q: float) -> float:
        """The same quantile of the lag net of CPU wait (0.0 where it is not known)."""
        return _nearest_rank(self._net_samples, q)

    @property
    def max(self) -> float:
        return max(self._samples, default=0.0)


def _nearest_rank(samples: deque[float], q: float) -> float:
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be within [0, 1], got {q}")
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]
