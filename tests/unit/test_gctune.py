"""GcPauses (the collector's pauses by generation) and Sweeper (young sweeps, full collections)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterable
from typing import Any

import pytest

from asched.gctune import GcPauses, Sweeper


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


def test_the_sweeper_collects_young_then_freezes_and_fully_collects_on_its_own_clock() -> None:
    now = [100.0]
    fake = _FakeGc(young_finds=[3, 2, 0])
    sweeper = _sweeper(fake, now, every=1.0, full_every=5.0)
    seen = _ticks(
        sweeper, fake, now, (100.5, 101.0, 101.5, 102.2, 103.3, 104.4, 105.0, 105.5, 106.0)
    )
    assert seen == [
        (100.5, None, []),
        (101.0, None, ["collect(0)", "freeze"]),  # found 3
        (101.5, None, []),
        (102.2, None, ["collect(0)", "freeze"]),  # found 2: still every sweep
        (103.3, None, ["collect(0)", "freeze"]),  # found none
        (104.4, None, ["freeze"]),  # so the next sweeps only freeze
        # The full collection: everything unfrozen, collected, frozen again; what it found.
        (105.0, 7, ["unfreeze", "collect(2)", "freeze"]),
        (105.5, None, []),
        (106.0, None, ["collect(0)", "freeze"]),  # after a full one: a young one first
    ]
    assert (sweeper.young_collections, sweeper.freezes_only) == (4, 1)


def test_while_young_collections_find_nothing_one_sweep_in_probe_every_collects() -> None:
    now = [0.0]
    # The first finds nothing, the first probe finds garbage, the one after it none.
    fake = _FakeGc(young_finds=[0, 4, 0])
    sweeper = _sweeper(fake, now, every=1.0, full_every=1000.0, probe_every=3)
    seen = _ticks(sweeper, fake, now, [float(t) for t in range(1, 10)])
    assert [calls for _, _, calls in seen] == [
        ["collect(0)", "freeze"],  # 1: found nothing
        ["freeze"],
        ["freeze"],
        ["collect(0)", "freeze"],  # 4: the probe finds 4
        ["collect(0)", "freeze"],  # 5: every sweep again; finds nothing
        ["freeze"],
        ["freeze"],
        ["collect(0)", "freeze"],  # 8: the next probe
        ["freeze"],
    ]


def test_a_due_full_collection_waits_for_idle_but_no_longer_than_another_interval() -> None:
    now = [0.0]
    fake = _FakeGc()
    busy = [True]
    sweeper = _sweeper(fake, now, every=1.0, full_every=10.0, idle=lambda: not busy[0])
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
    with pytest.raises(ValueError, match="every"):
        Sweeper(lambda: 0.0, every=0.0)
    with pytest.raises(ValueError, match="every"):
        Sweeper(lambda: 0.0, every=10.0, full_every=5.0)
    with pytest.raises(ValueError, match="probe_every"):
        Sweeper(lambda: 0.0, probe_every=0)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_frozen_alive_is_found_by_the_full_collection_once_it_dies() -> None:
    """What the young sweeps cost and the full collection recovers, with the real gc."""
    now = [0.0]
    sweeper = Sweeper(lambda: now[0], every=1.0, full_every=10.0)
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
