"""GcPauses (the collector's pauses by generation) and Sweeper (young sweeps, full collections)."""

from __future__ import annotations

import gc
import weakref

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
    def __init__(self) -> None:
        self.calls: list[str] = []

    def collect(self, generation: int) -> int:
        self.calls.append(f"collect({generation})")
        return 7 if generation == 2 else 0

    def freeze(self) -> None:
        self.calls.append("freeze")

    def unfreeze(self) -> None:
        self.calls.append("unfreeze")


def test_the_sweeper_collects_young_then_freezes_and_fully_collects_on_its_own_clock() -> None:
    now = [100.0]
    fake = _FakeGc()
    sweeper = Sweeper(
        lambda: now[0],
        every=1.0,
        full_every=5.0,
        collect=fake.collect,
        freeze=fake.freeze,
        unfreeze=fake.unfreeze,
    )
    seen = []
    for t in (100.5, 101.0, 101.5, 102.2, 105.0, 105.5, 106.0):
        now[0] = t
        seen.append((t, sweeper.tick(), list(fake.calls)))
        fake.calls.clear()
    assert seen == [
        (100.5, None, []),
        (101.0, None, ["collect(0)", "freeze"]),
        (101.5, None, []),
        (102.2, None, ["collect(0)", "freeze"]),
        # The full collection: everything unfrozen, collected, frozen again; what it found.
        (105.0, 7, ["unfreeze", "collect(2)", "freeze"]),
        (105.5, None, []),
        (106.0, None, ["collect(0)", "freeze"]),
    ]


def test_the_sweeper_refuses_intervals_that_cannot_work() -> None:
    with pytest.raises(ValueError, match="every"):
        Sweeper(lambda: 0.0, every=0.0)
    with pytest.raises(ValueError, match="every"):
        Sweeper(lambda: 0.0, every=10.0, full_every=5.0)


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
