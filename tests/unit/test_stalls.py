"""The stall watchdog names the code that held the event loop.

These tests use real time on purpose (a watchdog thread measures wall time; no fake clock
can stand in for the thread), with margins wide enough for a loaded machine.
"""

from __future__ import annotations

import time

import anyio
import pytest
from structlog.testing import capture_logs

from asched.stalls import StallWatch


def _hold_the_loop(seconds: float) -> None:
    # A deliberate blocking call: what the watchdog exists to catch.
    time.sleep(seconds)


def test_a_blocking_call_is_reported_with_its_stack() -> None:
    watch = StallWatch(0.05, interval=0.005)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch.heartbeat)
            await anyio.sleep(0.05)
            _hold_the_loop(0.3)
            await anyio.sleep(0.05)  # the loop is back; the thread reports
            tg.cancel_scope.cancel()

    with capture_logs() as logs:
        anyio.run(main)
    stalls = [e for e in logs if e["event"] == "event_loop_stall"]
    assert watch.stalls == 1
    assert len(stalls) == 1
    assert stalls[0]["held_ms"] >= 150
    assert any("_hold_the_loop" in frame for frame in stalls[0]["stack"])


def test_a_loop_that_keeps_yielding_reports_nothing() -> None:
    watch = StallWatch(1.0, interval=0.005)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch.heartbeat)
            for _ in range(20):
                await anyio.sleep(0.005)
            tg.cancel_scope.cancel()

    with capture_logs() as logs:
        anyio.run(main)
    assert watch.stalls == 0
    assert not [e for e in logs if e["event"] == "event_loop_stall"]


def test_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="threshold"):
        StallWatch(0)
