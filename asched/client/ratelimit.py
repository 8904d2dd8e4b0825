"""Client-side request rate limiting: a token bucket with client-go's qps/burst semantics.

client-go throttles every API request of a client through flowcontrol's token bucket
(golang.org/x/time/rate underneath): the bucket starts full with `burst` tokens, refills
at `qps` tokens per second up to `burst`, and each request takes one token, waiting until
one is available. Both schedulers in a benchmark must run under the same limits, so asched
mirrors those semantics exactly, including the reservation behaviour of x/time/rate:
a caller takes its token at once (the count may go below zero) and sleeps until the
refill covers it, so waiters are served in arrival order without a lock.

Unlimited: `qps <= 0` turns limiting off (every acquire returns at once). This differs
from client-go's rest.Config, where 0 means "use the default 5 qps" and only a negative
value disables limiting; asched's config layer applies its own defaults before building
a limiter, so here 0 needs no second meaning.

Time comes from the injected Clock, so tests check the pacing without sleeping.
"""

from __future__ import annotations

import anyio

from asched.base.clock import Clock


class TokenBucket:
    """At most `burst` requests at once, then `qps` per second on average."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        if qps > 0 and burst < 1:
            # x/time/rate with burst 0 never grants a token; a limiter that blocks forever
            # is a configuration error, not a rate.
            raise ValueError(f"burst must be >= 1 when qps > 0, got {burst}")
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.now()

    @property
    def unlimited(self) -> bool:
        return self._qps <= 0

    @property
    def qps(self) -> float:
        return self._qps

    @property
    def burst(self) -> int:
        return int(self._burst)

    def _refill(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
            self._last = now

    def try_acquire(self) -> bool:
        """Take a token if one is available right now; never waits."""
        if self.unlimited:
            return True
        self._refill(self._clock.now())
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    async def acquire(self) -> None:
        """Wait until this request may go. Cancelling a waiter hands its token back."""
        if self.unlimited:
            return
        self._refill(self._clock.now())
        self._tokens -= 1.0
        if self._tokens >= 0.0:
            return
        wait = -self._tokens / self._qps
        try:
            await self._clock.sleep(wait)
        except anyio.get_cancelled_exc_class():
            # x/time/rate cancels the reservation on context cancellation; a token given
            # back lets the next waiter go that much earlier.
            self._tokens = min(self._burst, self._tokens + 1.0)
            raise
