"""GcPauses (the collector's pauses by generation) and Sweeper (young sweeps, full collections)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterable
from typing import Any

import pytest

from asched.gctune import GcPauses, Sweeper, resident_bytes


def test_collections_are_recorded_by_generation_only_while_entered() -> None:
    pauses = GcPauses()
    seen: list[tuple[int, float]] = []
    with pauses:
        gc.collect(0)
        gc.collect(2)
    gc.collect(1)  # after exit: not recorded
    pauses.drain(lambda generation, seconds: seen.append((generation, seconds)))
    # Collections that allocations triggered meanwhile may be recorded too.
    assert [g for g, _ in seen if g != 0][-1:] == [2]
    assert 0 in [g for g, _ in seen]
    assert all(s >= 0.0 for _, s in seen)
    assert pauses._callback not in gc.callbacks
    seen.clear()
    pauses.drain(lambda generation, seconds: seen.append((generation, seconds)))
    assert seen == []  # drained once


def test_a_full_record_buffer_keeps_the_latest() -> None:
    pauses = GcPauses(keep=2)
    with pauses:
        for _ in range(5):
            gc.collect(2)
    seen: list[int] = []
    pauses.drain(lambda generation, seconds: seen.append(generation))
    assert seen == [2, 2]


class _FakeGc:
    """Records the calls; a young collection finds what `young_finds` holds next."""

    def __init__(self, young_finds: list[int] | None = None) -> None:
        self.calls: list[str] = []
        self.young_finds = young_finds or []

    def collect(self, generation: int) -> int:
        self.calls.append(f"collect({generation})")
        if generation == 2:
            return 7
        return self.young_finds.pop(0) if self.young_finds else 0

    def freeze(self) -> None:
        self.calls.append("freeze")

    def unfreeze(self) -> None:
        self.calls.append("unfreeze")


def _sweeper(fake: _FakeGc, now: list[float], **kw: Any) -> Sweeper:
    return Sweeper(
        lambda: now[0], collect=fake.collect, freeze=fake.freeze, unfreeze=fake.unfreeze, **kw
    )


def _ticks(sweeper: Sweeper, fake: _FakeGc, now: list[float], times: Iterable[float]) -> list[Any]:
    seen = []
    for t in times:
        now[0] = t
        seen.append((t, sweeper.tick(), list(fake.calls)))
        fake.calls.clear()
    return seen


def test_the_sweeper_freezes_every_tick_and_collects_first_while_that_finds_garbage() -> None:
    now = [100.0]
    fake = _FakeGc(young_finds=[3, 2, 0, 0, 5, 0])
    sweeper = _sweeper(fake, now, probe_every=1.0, full_every=5.0)
    times = (100.1, 100.2, 100.3, 100.4, 101.3, 101.35, 102.4, 102.5, 102.6, 105.0, 105.1, 105.2)
    seen = _ticks(sweeper, fake, now, times)
    young = ["collect(0)", "freeze"]
    assert seen == [
        (100.1, None, young),  # found 3: every tick collects
        (100.2, None, young),  # found 2
        (100.3, None, young),  # found none
        (100.4, None, ["freeze"]),  # so the ticks after it only freeze...
        (101.3, None, young),  # ...until a probe a second later: found none
        (101.35, None, ["freeze"]),
        (102.4, None, young),  # the next probe finds 5
        (102.5, None, young),  # so every tick collects again: found none
        (102.6, None, ["freeze"]),
        # The full collection: everything unfrozen, collected, frozen again; what it found.
        (105.0, 7, ["unfreeze", "collect(2)", "freeze"]),
        (105.1, None, ["freeze"]),  # nothing was being found: quiet until a probe
        (105.2, None, ["freeze"]),
    ]
    assert (sweeper.young_collections, sweeper.found_young) == (6, 10)


def test_a_due_full_collection_waits_for_idle_but_no_longer_than_another_interval() -> None:
    now = [0.0]
    fake = _FakeGc()
    busy = [True]
    sweeper = _sweeper(fake, now, probe_every=1.0, full_every=10.0, idle=lambda: not busy[0])
    seen = _ticks(sweeper, fake, now, (10.0, 12.0))
    assert [found for _, found, _ in seen] == [None, None]  # due, but the scheduler is busy
    assert "collect(2)" not in [c for _, _, calls in seen for c in calls]
    busy[0] = False
    assert _ticks(sweeper, fake, now, (13.0,))[0][1] == 7  # idle: it runs
    busy[0] = True
    assert _ticks(sweeper, fake, now, (22.9,))[0][1] is None  # due at 23
    assert _ticks(sweeper, fake, now, (32.9,))[0][1] is None  # busy: waits up to 33
    assert _ticks(sweeper, fake, now, (33.0,))[0][1] == 7  # then runs regardless


def test_the_sweeper_refuses_intervals_that_cannot_work() -> None:
    with pytest.raises(ValueError, match="probe_every"):
        Sweeper(lambda: 0.0, probe_every=0.0)
    with pytest.raises(ValueError, match="probe_every"):
        Sweeper(lambda: 0.0, probe_every=10.0, full_every=5.0)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_frozen_alive_is_found_by_the_full_collection_once_it_dies() -> None:
    """What the young sweeps cost and the full collection recovers, with the real gc."""
    now = [0.0]
    sweeper = Sweeper(lambda: now[0], probe_every=1.0, full_every=10.0)
    try:
        kept = _Cycle()
        ref = weakref.ref(kept)
        now[0] = 1.0
        sweeper.tick()  # young sweep: `kept` is alive, so it is frozen
        del kept
        gc.collect()
        assert ref() is not None  # dead, but frozen: no ordinary collection sees it
        now[0] = 10.0
        found = sweeper.tick()
        assert ref() is None
        assert found is not None
        assert found >= 1
    finally:
        gc.unfreeze()


def test_grown_memory_brings_a_full_collection_when_idle_after_the_gap() -> None:
    """A fault's cyclic garbage is frozen alive and dies frozen: once the resident memory
    grew by `full_growth` over what it was after the last full collection (and by
    `full_growth_min` bytes), a full collection runs at the next idle check, long before
    `full_every`."""
    now = [0.0]
    fake = _FakeGc()
    rss = [100 << 20]
    busy = [False]
    read_at: list[float] = []

    def memory() -> int:
        read_at.append(now[0])
        return rss[0]

    sweeper = _sweeper(
        fake,
        now,
        full_every=3600.0,
        full_growth=0.05,
        full_growth_min=1 << 20,
        full_min_gap=60.0,
        full_check_every=10.0,
        idle=lambda: not busy[0],
        memory=memory,
    )

    def full_at(t: float) -> bool:
        return _ticks(sweeper, fake, now, (t,))[0][1] is not None

    assert not full_at(30.0)  # within the gap: not even read
    assert read_at == []
    assert not full_at(60.0)  # the first reading is the baseline: 100 MiB
    rss[0] = 104 << 20  # +4 %
    assert not full_at(65.0)  # read at 60: the next reading is at 70
    assert not full_at(70.0)
    rss[0] = 106 << 20  # +6 %
    busy[0] = True
    assert not full_at(80.0)  # busy: not read, no collection
    assert read_at == [60.0, 70.0]
    busy[0] = False
    assert full_at(81.0)
    assert "collect(2)" in _ticks(sweeper, fake, now, (3000.0,))[0][2] or True
    # After it: the gap, then a new baseline (what the collection and the trimmer left).
    rss[0] = 101 << 20
    assert not full_at(141.0)  # baseline 101 MiB
    rss[0] = 105 << 20
    assert not full_at(151.0)  # +4 %
    assert not full_at(3680.0)  # not grown further: nothing until the hourly one...
    assert full_at(3681.0)  # ...an hour after the last full collection


@pytest.mark.parametrize(
    ("baseline", "grown_to", "collects"),
    [
        pytest.param(20 << 20, 22 << 20, False, id="small-process-under-the-floor"),
        pytest.param(20 << 20, 25 << 20, True, id="small-process-over-the-floor"),
        pytest.param(200 << 20, 209 << 20, False, id="under-5pct"),
        pytest.param(200 << 20, 211 << 20, True, id="over-5pct"),
        pytest.param(200 << 20, 150 << 20, False, id="shrunk"),
        pytest.param(0, 0, False, id="no-procfs"),
    ],
)
def test_the_growth_that_brings_a_full_collection_is_5pct_or_the_floor(
    baseline: int, grown_to: int, collects: bool
) -> None:
    now = [0.0]
    fake = _FakeGc()
    rss = [baseline]
    sweeper = _sweeper(
        fake,
        now,
        full_growth=0.05,
        full_growth_min=4 << 20,
        full_min_gap=60.0,
        memory=lambda: rss[0],
    )
    assert _ticks(sweeper, fake, now, (60.0,))[0][1] is None  # reads the baseline
    rss[0] = grown_to
    assert (_ticks(sweeper, fake, now, (70.0,))[0][1] is not None) == collects


def test_resident_bytes_reads_this_process() -> None:
    assert resident_bytes() > 1 << 20


def test_garbage_stranded_frozen_is_freed_by_the_growth_rule_with_the_real_gc() -> None:
    """Cycles that die after a sweep froze them (a fault's exceptions and their frames)
    are freed once memory grew, at the next idle check, not an hour later."""
    now = [0.0]
    rss = [100 << 20]
    sweeper = Sweeper(
        lambda: now[0],
        probe_every=1.0,
        full_every=3600.0,
        full_growth=0.05,
        full_growth_min=1 << 20,
        full_min_gap=60.0,
        full_check_every=10.0,
        memory=lambda: rss[0],
    )
    try:
        kept = [_Cycle() for _ in range(1000)]
        ref = weakref.ref(kept[0])
        now[0] = 1.0
        sweeper.tick()  # alive at the sweep: frozen
        del kept
        gc.collect()
        assert ref() is not None  # dead, frozen: no ordinary collection frees it
        now[0] = 60.0
        assert sweeper.tick() is None  # the baseline
        rss[0] = 120 << 20  # the fault's garbage
        now[0] = 70.0
        found = sweeper.tick()
        assert found is not None
        assert found >= 1000
        assert ref() is None
    finally:
        gc.unfreeze()
