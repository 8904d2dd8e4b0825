"""Hands the C heap's free pages back to the kernel once a second (glibc's malloc_trim).

Whatever asched allocates above pymalloc's 512 bytes comes from the C allocator: every
watch event's body, decoded pages, dict and list tables of thousands of entries. glibc
returns freed memory to the kernel only from the top of its heap; a chunk freed below a
live one stays resident, free but counted in the process's RSS, until something reuses
it. Measured at the end of anti-affinity 1000/1000 (docs/benchmarks.md, round twelve):
malloc_trim(0) took RSS from 123 to 105 MiB, so 18 MiB of it were such free pages, and
a fixed mmap threshold (MALLOC_MMAP_THRESHOLD_, big buffers in mappings of their own)
left 13 MiB of them. kube-scheduler's Go runtime returns idle spans on its own (its
scavenger); this is asched's. Each trim walks glibc's free lists and releases whole free
pages with madvise; a page used again later faults back in.

Only on glibc; elsewhere (musl, macOS) `Trimmer.available` is False and `tick` does
nothing. Call `tick` from the event loop (LoopLagMonitor's on_tick, in app.py): it runs
at most once per `every` seconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable

TRIM_EVERY = 1.0


def _glibc_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


class Trimmer:
    """malloc_trim(0) at most once per `every` seconds; `last` is how long the latest took."""

    def __init__(
        self,
        now: Callable[[], float],
        *,
        every: float = TRIM_EVERY,
        trim: Callable[[int], int] | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        if every <= 0:
            raise ValueError(f"need every > 0, got {every}")
        self._now, self._every, self._timer = now, every, timer
        self._trim = _glibc_malloc_trim() if trim is None else trim
        self._next = now() + every
        self.last = 0.0

    @property
    def available(self) -> bool:
        return self._trim is not None

    def tick(self) -> bool:
        """Trim if one is due; True when it ran."""
        if self._trim is None:
            return False
        now = self._now()
        if now < self._next:
            return False
        self._next = now + self._every
        started = self._timer()
        self._trim(0)
        self.last = self._timer() - started
        return True
