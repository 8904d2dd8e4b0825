"""GcPauses: the collector's pauses by generation, recorded while entered."""

from __future__ import annotations

import gc

from asched.gctune import GcPauses


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
