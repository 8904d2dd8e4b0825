"""ReadBack: the read after a write whose answer was lost, on a clock whose sleeps end at
once. What the answers mean to the bind check is in tests/unit/scheduler/test_bindcheck.py;
this file checks the loop itself: its pauses, its one warning, and what it hands back."""

from __future__ import annotations

from typing import Any

import pytest
import structlog.testing

from asched.client.protocol import ApiError, TransportError
from asched.client.readback import ReadBack, Unread
from tests.clocks import JumpingClock
from tests.reads import Reads

PATH = "/apis/example/v1/namespaces/ns/things/t"


def _reader(*answers: dict[str, Any] | Exception) -> tuple[ReadBack, Reads, JumpingClock]:
    server = Reads.scripted(*answers)
    clock = JumpingClock()
    return ReadBack(server, clock, first_wait=1.0, max_wait=4.0, refused_for=30.0), server, clock


async def test_the_answer_is_decoded_and_handed_back() -> None:
    reader, server, clock = _reader({"metadata": {"name": "t"}})
    got = await reader.read(PATH, lambda raw: raw["metadata"]["name"], subject="ns/t")
    assert got == "t"
    assert server.paths == [PATH]
    assert clock.slept == []


async def test_a_404_is_not_found_at_once() -> None:
    reader, server, _ = _reader(ApiError(404, "NotFound", "things t not found"))
    assert await reader.read(PATH, dict, subject="ns/t") is Unread.NOT_FOUND
    assert len(server.paths) == 1


async def test_the_pauses_double_to_the_cap_with_jitter_and_stay_quiet() -> None:
    failures = [
        TransportError("connection refused"),
        ApiError(503, "ServiceUnavailable", "etcd not ready"),
        ApiError(429, "TooManyRequests", "slow down"),
    ] * 3
    reader, _, clock = _reader(*failures, {"ok": True})
    with structlog.testing.capture_logs() as logs:
        assert await reader.read(PATH, dict, subject="ns/t") == {"ok": True}
    caps = [1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    assert len(clock.slept) == len(caps)
    for slept, cap in zip(clock.slept, caps, strict=True):
        assert cap / 2 <= slept <= cap
    # A server that cannot answer yet is routine: nothing above debug.
    assert {e["log_level"] for e in logs} == {"debug"}
    assert {e["subject"] for e in logs} == {"ns/t"}


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refusal_gives_up_after_refused_for_with_one_warning(status: int) -> None:
    refusal = ApiError(status, "Forbidden", "RBAC caches not yet filled")
    reader, server, clock = _reader(*[refusal] * 100)
    with structlog.testing.capture_logs() as logs:
        assert await reader.read(PATH, dict, subject="ns/t") is Unread.REFUSED
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [(e["event"], e["subject"]) for e in warnings] == [("read_back_refused", "ns/t")]
    # The last read came at least refused_for after the first refusal, and not much later.
    assert 30.0 <= sum(clock.slept) <= 34.0
    assert len(server.paths) == len(clock.slept) + 1
