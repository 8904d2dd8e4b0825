"""Garbage-collector settings for a process that holds large, long-lived caches.

The informer caches hold hundreds of thousands of small objects that live for the whole
run, and every scheduling cycle allocates many short-lived ones. With CPython's defaults
(a gen-0 collection every 700 net allocations) the collector rescans the caches over and
over: measured in-process with 1000 nodes and 3000 pods, 15% of the scheduling time went to
collections and gen-2 pauses reached 145 ms (event-loop lag every binding and watch feels).
Raising the gen-0 threshold and freezing the synced caches out of the collector's view
brought that to 74 ms in total, 31 ms at most, and scheduling 1.5x faster. Objects stay
reference-counted: frozen ones are still freed when nothing refers to them. Once running,
Sweeper keeps the young generation to a second's survivors (see there).
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Callable
from typing import Any

GEN0_THRESHOLD = 50_000
GEN1_THRESHOLD = 20
GEN2_THRESHOLD = 100


def tune() -> None:
    """Fewer, larger young-generation collections (call once at process start)."""
    gc.set_threshold(GEN0_THRESHOLD, GEN1_THRESHOLD, GEN2_THRESHOLD)


def freeze_caches() -> None:
    """Move everything alive now (the freshly synced caches) out of future collections.

    No collection runs first. One that walks the caches held the event loop 77-96 ms at
    5000 nodes and 10000 pending pods, right when the first pods are scheduled, and
    measured there it found 293 unreachable objects (a young collection alone: 49 ms and
    5 objects; benchmarks, basic 5000/10000, gc callbacks). Cyclic garbage alive now is
    frozen with the caches, a few hundred objects, until Sweeper's first full collection."""
    gc.freeze()


# Seconds between young sweeps (Sweeper), and between full collections. A full one walks
# every object: 0.7-1.4 s at 15000 nodes and 30000 pods, so once an hour; the young sweeps
# strand next to nothing for it to find (measured below).
SWEEP_EVERY = 1.0
FULL_EVERY = 3600.0
# While young collections find nothing, one sweep in PROBE_EVERY collects (the others
# only freeze); a probe that finds garbage brings back a collection every sweep.
PROBE_EVERY = 10


class Sweeper:
    """A young collection and a freeze every `every` seconds; a full one every `full_every`.

    CPython starts a young collection when allocations minus deallocations pass the
    threshold, and both are counted whatever generation the object is in. A scheduler
    mostly replaces objects (a bound pod's new NodeInfo for the old one), so the count
    barely moves while the young list grows with every replacement, and the collection
    that finally comes walks all of it: at 15000 nodes and 30000 pods, 18 young collections
    of up to 410 ms each (docs/benchmarks.md, round nine). Collecting the young generation
    on a clock keeps each walk to one interval's survivors, and freezing them (a list
    splice, O(1)) keeps the next walk from seeing them again.

    Those walks find nothing: in basic 1000/5000, churn and Coscheduling 1000 x 3 runs
    every young sweep found 0 unreachable objects, while each took 3-117 ms of the loop
    (it walks the bindings in flight: their coroutines, futures and contexts; docs/
    benchmarks.md, round fourteen). So once a young collection finds nothing, the sweeps
    after it only freeze, and one in `probe_every` collects. A probe sees what the last
    interval left, a sample of how fast cyclic garbage is made; one that finds any brings
    back a collection every sweep until one finds none again. What the probes miss (cycles
    made in the skipped intervals of a stretch that starts making them) is frozen with the
    survivors and left for the full collection.

    A frozen object is still freed by reference counting; only a cycle that dies after it
    was frozen is left for the full collection, which unfreezes everything and collects
    it every `full_every` seconds and reports what it found (`tick`'s return), so that
    leak stays bounded and measured. Measured with a full collection every 15 s during
    that 15000-node run: the first found 298 objects (the cycles frozen with the caches
    at sync, see freeze_caches), the three after it found none. The young sweeps took 59
    collections, 2.2 s in all and at most 102 ms, against 20 collections, 2.5 s and one
    of 962 ms without them; the loop lag p99 fell from 84 to 27 ms (22.3 to 0.4 net).

    The full collection holds the loop as long as it walks (0.7-1.4 s at that size), so
    when it falls due it waits for `idle()` (nothing queued to schedule or bind) for up
    to another `full_every`, then runs regardless.
    """

    def __init__(
        self,
        now: Callable[[], float],
        *,
        every: float = SWEEP_EVERY,
        full_every: float = FULL_EVERY,
        probe_every: int = PROBE_EVERY,
        idle: Callable[[], bool] = lambda: True,
        collect: Callable[[int], int] = gc.collect,
        freeze: Callable[[], None] = gc.freeze,
        unfreeze: Callable[[], None] = gc.unfreeze,
    ) -> None:
        if every <= 0 or full_every < every:
            raise ValueError(f"need 0 < every <= full_every, got {every} and {full_every}")
        if probe_every < 1:
            raise ValueError(f"probe_every must be >= 1, got {probe_every}")
        self._now, self._every, self._full_every = now, every, full_every
        self._probe_every, self._idle = probe_every, idle
        self._collect, self._freeze, self._unfreeze = collect, freeze, unfreeze
        start = now()
        self._next, self._next_full = start + every, start + full_every
        # Sweeps since the last young collection; 0 while collections find garbage.
        self._quiet_sweeps = 0
        self._found_nothing = False
        self.young_collections = 0
        self.freezes_only = 0

    def tick(self) -> int | None:
        """Sweep if one is due; after a full collection, the unreachable objects it found."""
        now = self._now()
        if now >= self._next_full and (self._idle() or now >= self._next_full + self._full_every):
            self._unfreeze()
            found = self._collect(2)
            self._freeze()
            self._next, self._next_full = now + self._every, now + self._full_every
            self._found_nothing, self._quiet_sweeps = False, 0
            return found
        if now >= self._next:
            self._quiet_sweeps += 1
            if not self._found_nothing or self._quiet_sweeps >= self._probe_every:
                self._found_nothing = self._collect(0) == 0
                self._quiet_sweeps = 0
                self.young_collections += 1
            else:
                self.freezes_only += 1
            self._freeze()
            self._next = now + self._every
        return None


class GcPauses:
    """How long each collection held the thread, by generation: the loop-lag histogram says
    the loop was late, this says how much of it the collector was. Records while entered.

    The callback only appends to a bounded deque. It runs wherever an allocation triggered
    the collection, possibly inside a metric's observe() holding that metric's lock, so it
    must not call into the metrics itself (the same lock, taken again, would deadlock);
    `drain` hands the records over from a task on the loop instead. A deque's append takes
    no lock and, while the collector runs its callbacks, cannot start another collection.
    """

    def __init__(self, *, keep: int = 4096) -> None:
        self._started = 0.0
        self._records: deque[tuple[int, float]] = deque(maxlen=keep)

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def drain(self, observe: Callable[[int, float], None]) -> None:
        """Pass every (generation, seconds) recorded since the last drain to *observe*."""
        records = self._records
        while records:
            generation, seconds = records.popleft()
            observe(generation, seconds)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._records.append((info["generation"], time.perf_counter() - self._started))
