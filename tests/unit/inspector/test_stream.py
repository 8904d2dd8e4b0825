"""Backpressure: snapshots are coalesced per client, a client that never reads holds one
snapshot at most, and publishing never waits for a client."""

from __future__ import annotations

import anyio
import pytest

from asched.inspector.stream import Broadcaster, TooManyClients


async def test_a_slow_client_gets_only_the_newest_snapshot() -> None:
    b = Broadcaster()
    slot = b.subscribe()
    for i in range(1000):
        b.publish(f"snapshot {i}".encode())
    assert slot.pending == b"snapshot 999"  # one held, the rest coalesced away
    assert await slot.take() == b"snapshot 999"
    assert slot.pending is None


async def test_a_client_that_never_reads_holds_one_snapshot_whatever_is_published() -> None:
    b = Broadcaster()
    stalled = b.subscribe()
    big = b"x" * 1_000_000
    for _ in range(200):  # 200 MB if anything queued them
        b.publish(bytes(big))
    assert stalled.pending is not None
    assert len(stalled.pending) == len(big)


async def test_a_new_client_starts_from_the_latest_snapshot_and_waits_for_the_next() -> None:
    b = Broadcaster()
    b.publish(b"one")
    slot = b.subscribe()
    assert await slot.take() == b"one"
    got: list[bytes] = []

    async def reader() -> None:
        got.append(await slot.take())

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        await anyio.wait_all_tasks_blocked()
        assert got == []
        b.publish(b"two")
    assert got == [b"two"]


def test_clients_are_capped_and_leaving_frees_a_place() -> None:
    b = Broadcaster(max_clients=2)
    first = b.subscribe()
    b.subscribe()
    with pytest.raises(TooManyClients):
        b.subscribe()
    b.unsubscribe(first)
    b.subscribe()
    assert b.clients == 2
