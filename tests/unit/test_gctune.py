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
