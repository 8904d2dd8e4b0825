"""Trimmer: at most one malloc_trim per period, a no-op without glibc, and on glibc the
free pages below live memory really leave the process's RSS."""

from __future__ import annotations

import subprocess
import sys

import pytest

from asched.base.clock import FakeClock
from asched.malloctrim import Trimmer


def test_trims_at_most_once_per_period() -> None:
    clock = FakeClock()
    calls: list[int] = []
    ticks = iter([10.0, 10.25])
    trimmer = Trimmer(
        clock.now, every=1.0, trim=lambda pad: calls.append(pad) or 1, timer=lambda: next(ticks)
    )
    assert not trimmer.tick()  # not due yet
    clock.advance(1.0)
    assert trimmer.tick()
    assert calls == [0]
    assert trimmer.last == 0.25
    clock.advance(0.5)
    assert not trimmer.tick()
    assert calls == [0]


def test_without_glibc_nothing_runs() -> None:
    clock = FakeClock()
    trimmer = Trimmer(clock.now, every=1.0)
    trimmer._trim = None  # as on musl or macOS, where _glibc_malloc_trim finds nothing
    clock.advance(5.0)
    assert not trimmer.available
    assert not trimmer.tick()


def test_a_period_must_be_positive() -> None:
    with pytest.raises(ValueError, match="every > 0"):
        Trimmer(FakeClock().now, every=0)


# In a fresh interpreter: in this one, earlier tests left holes in the heap where the small
# blocks could land, and the freed big ones would then merge at the top and leave at once.
_PINNED = """
import os, sys
from asched.base.clock import FakeClock
from asched.malloctrim import Trimmer

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

clock = FakeClock()
trimmer = Trimmer(clock.now, every=1.0)
if not trimmer.available:
    print("unavailable")
    sys.exit(0)
# 64 KiB blocks (below glibc's mmap threshold: heap memory), each followed by a small live
# block above pymalloc's 512 bytes (heap memory too) that keeps it from being returned as
# the heap's top when freed.
big, live = [], []
for _ in range(1024):
    big.append(bytes(64 * 1024))
    live.append(bytes(600))
del big
before = rss()
clock.advance(1.0)
assert trimmer.tick()
print(before - rss(), len(live))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc only")
def test_free_pages_below_live_memory_are_returned() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PINNED], capture_output=True, text=True, check=True, timeout=60
    )
    if done.stdout.strip() == "unavailable":
        pytest.skip("no glibc malloc_trim here")
    returned, live = (int(v) for v in done.stdout.split())
    assert returned >= 32 * 1024 * 1024
    assert live == 1024
