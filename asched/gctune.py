"""Garbage-collector settings for a process that holds large, long-lived caches.

The informer caches hold hundreds of thousands of small objects that live for the whole
run, and every scheduling cycle allocates many short-lived ones. With CPython's defaults
(a gen-0 collection every 700 net allocations) the collector rescans the caches over and
over: measured in-process with 1000 nodes and 3000 pods, 15% of the scheduling time went to
collections and gen-2 pauses reached 145 ms (event-loop lag every binding and watch feels).
Raising the gen-0 threshold and freezing the synced caches out of the collector's view
brought that to 74 ms in total, 31 ms at most, and scheduling 1.5x faster. Objects stay
reference-counted: frozen ones are still freed when nothing refers to them. Once running,
Sweeper keeps the young generation to a tenth of a second's survivors (see there).
"""

from __future__ import annotations

import gc
import os
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


# Seconds between young collections while they find nothing (Sweeper's probes), and
# between full collections. A full one walks every object: 0.7-1.4 s at 15000 nodes and
# 30000 pods, so once an hour; what it finds is measured (below).
PROBE_EVERY = 1.0
FULL_EVERY = 3600.0
# A full collection also falls due, sooner than FULL_EVERY, once the process's resident
# memory grew by FULL_GROWTH over what it was after the last full collection (and by
# FULL_GROWTH_MIN_BYTES at least), no sooner than FULL_MIN_GAP seconds after that one and
# only while the scheduler is idle (counted then, once per FULL_CHECK_EVERY seconds).
# Why: a control-plane fault makes cyclic garbage that outlives a sweep (a failed
# request's exception holds its traceback, whose frames hold the futures that hold the
# exception, and what those frames held: bodies, pods, connections), so it is frozen
# alive and dies frozen. Measured in-process (200 nodes, 800 pods replaced 5 a second, a
# full collection after each fault): 1,700-3,800 such objects per API-server restart or
# forced relist, none between faults, and the collection freed 5 MiB of the C heap after
# a restart; the soak (1000 nodes, a fault every 5 minutes) grew RSS in a step at every
# fault, 93 to 127 MiB, and never reached the hourly collection. The measure is memory,
# not the frozen objects' number: a few thousand objects held those megabytes, and
# counting the frozen generation walks it (17-33 ms per million objects) where reading
# the resident size costs microseconds. CPython bounds its own full collections alike
# (one once the objects that survived since the last pass a quarter of the long-lived).
FULL_GROWTH = 0.05
FULL_GROWTH_MIN_BYTES = 4 << 20
FULL_MIN_GAP = 60.0
FULL_CHECK_EVERY = 10.0
_STATM = "/proc/self/statm"


def resident_bytes() -> int:
    """The process's resident set size, from /proc (Linux); 0 where there is none, which
    turns the growth rule off. Reading it is a few microseconds of the kernel's, no I/O."""
    try:
        # procfs: answered from the kernel's memory, no disk and no wait (on the loop).
        with open(_STATM, "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Sweeper:
    """Freezes the young generation at every tick, collecting it first while collections
    find garbage (and once every `probe_every` seconds otherwise); collects everything
    every `full_every` seconds, and sooner, when idle, once the resident memory grew by
    `full_growth` since the last full collection (see FULL_GROWTH).

    CPython starts a young collection when allocations minus deallocations pass the
    threshold, and both are counted whatever generation the object is in. A scheduler
    mostly replaces objects (a bound pod's new NodeInfo for the old one), so the count
    barely moves while the young list grows with every replacement, and the collection
    that finally comes walks all of it: at 15000 nodes and 30000 pods, 18 young collections
    of up to 410 ms each (docs/benchmarks.md, round nine). Freezing (a list splice, O(1),
    that also zeroes the allocation count) takes the survivors out of every later young
    walk. The app calls `tick` from the loop-lag monitor, every 0.1 s, so no young
    collection, ours or an automatic one, walks more than a tick's survivors. Freezing
    once a second left a second's: during bursts of bindings the in-flight coroutines,
    futures and contexts passed the threshold within it, and automatic collections walked
    them for 34-67 ms (churn 1000/5000; docs/benchmarks.md, round fourteen).

    Collecting before the freeze finds what died young in cycles. When a collection finds
    nothing, the ticks after it only freeze, and one every `probe_every` seconds collects:
    in basic and churn runs every collection found nothing. One that finds garbage brings
    back a collection every tick (Coscheduling gangs found 12-27 thousand objects a
    second, asyncio cancellations, before Clock.wait). Each collection walks one tick's
    survivors, so collecting every tick costs what collecting every second did.

    A frozen object is still freed by reference counting; what the young collections miss
    is left for the full collection: a cycle that dies after the tick it was born in, and
    garbage made between probes before one finds it. The full collection unfreezes
    everything, collects it, and reports what it found (`tick`'s return; the metric
    asched_gc_full_collection_unreachable_objects), so that leak stays bounded and
    measured. It holds the loop as long as it walks (0.7-1.4 s at 15000 nodes), so when it
    falls due it waits for `idle()` (nothing queued to schedule or bind) for up to another
    `full_every`, then runs regardless. Falling due by growth, it runs only when idle:
    the hourly one remains the bound.
    """

    def __init__(
        self,
        now: Callable[[], float],
        *,
        probe_every: float = PROBE_EVERY,
        full_every: float = FULL_EVERY,
        idle: Callable[[], bool] = lambda: True,
        full_growth: float = FULL_GROWTH,
        full_growth_min: int = FULL_GROWTH_MIN_BYTES,
        full_min_gap: float = FULL_MIN_GAP,
        full_check_every: float = FULL_CHECK_EVERY,
        collect: Callable[[int], int] = gc.collect,
        freeze: Callable[[], None] = gc.freeze,
        unfreeze: Callable[[], None] = gc.unfreeze,
        memory: Callable[[], int] = resident_bytes,
    ) -> None:
        if probe_every <= 0 or full_every < probe_every:
            raise ValueError(
                f"need 0 < probe_every <= full_every, got {probe_every} and {full_every}"
            )
        if full_growth <= 0:
            raise ValueError(f"need full_growth > 0, got {full_growth}")
        self._now, self._probe_every, self._full_every = now, probe_every, full_every
        self._idle = idle
        self._collect, self._freeze, self._unfreeze = collect, freeze, unfreeze
        self._memory = memory
        self._full_growth, self._full_growth_min = full_growth, full_growth_min
        self._full_min_gap, self._full_check_every = full_min_gap, full_check_every
        start = now()
        self._next_probe, self._next_full = start + probe_every, start + full_every
        # The resident memory after the last full collection, read at the first check
        # after it (the trimmer has returned what it freed by then); None until then.
        self._memory_after_full: int | None = None
        self._next_check = start + full_min_gap
        # The last young collection found garbage: collect at every tick.
        self._finding = True
        self.young_collections = 0
        self.found_young = 0

    def tick(self) -> int | None:
        """Freeze, after a young collection when one is due; after a full collection, the
        unreachable objects it found."""
        now = self._now()
        if self._full_due(now):
            self._unfreeze()
            found = self._collect(2)
            self._freeze()
            self._next_probe, self._next_full = now + self._probe_every, now + self._full_every
            self._memory_after_full = None
            self._next_check = now + self._full_min_gap
            return found
        if self._finding or now >= self._next_probe:
            found = self._collect(0)
            self._finding = found > 0
            self._next_probe = now + self._probe_every
            self.young_collections += 1
            self.found_young += found
        self._freeze()
        return None

    def _full_due(self, now: float) -> bool:
        if now >= self._next_full:
            return self._idle() or now >= self._next_full + self._full_every
        if now < self._next_check or not self._idle():
            return False
        self._next_check = now + self._full_check_every
        memory = self._memory()
        baseline = self._memory_after_full
        if baseline is None or baseline <= 0 or memory <= 0:
            self._memory_after_full = memory
            return False
        return memory - baseline > max(self._full_growth_min, self._full_growth * baseline)


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
