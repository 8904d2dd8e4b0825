"""BindCheck: what the API server says about a pod whose Binding failed without a clear
answer, read through a scripted client on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from asched.client.protocol import ApiError, TransportError, may_have_been_applied
from asched.client.readback import ReadBack
from asched.scheduler.bindcheck import BindCheck, Landed
from tests.builders import make_pod
from tests.clocks import JumpingClock
from tests.reads import Reads

POD = make_pod("p", "ns").uid("u1").obj()


async def _landed(server: Reads) -> Landed:
    """Run the check on a clock whose sleeps end at once."""
    reader = ReadBack(server, JumpingClock(), first_wait=1.0, max_wait=4.0, refused_for=30.0)
    check = BindCheck(reader)
    return await check.landed(POD, "n1")


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        pytest.param(make_pod("p", "ns").uid("u1").node("n1").raw(), Landed.HERE, id="here"),
        pytest.param(make_pod("p", "ns").uid("u1").raw(), Landed.NOT_BOUND, id="not-bound"),
        pytest.param(make_pod("p", "ns").uid("u1").node("n2").raw(), Landed.ELSEWHERE, id="else"),
        pytest.param(make_pod("p", "ns").uid("u2").node("n1").raw(), Landed.GONE, id="namesake"),
        pytest.param(ApiError(404, "NotFound", "pods p not found"), Landed.GONE, id="deleted"),
    ],
)
async def test_the_answer_says_where_the_pod_is(
    current: dict[str, Any] | Exception, expected: Landed
) -> None:
    server = Reads.scripted(current)
    assert await _landed(server) is expected
    assert server.paths == ["/api/v1/namespaces/ns/pods/p"]


async def test_an_unreachable_or_failing_server_is_asked_until_it_answers() -> None:
    failures: list[Exception] = [
        TransportError("connection refused"),
        TransportError("closed before the answer was complete", broken=True),
        ApiError(503, "ServiceUnavailable", "etcd not ready"),
        ApiError(429, "TooManyRequests", "slow down"),
    ]
    # More than refused_for of fake time passes: these never give up.
    server = Reads.scripted(*failures * 10, make_pod("p", "ns").uid("u1").node("n1").raw())
    assert await _landed(server) is Landed.HERE
    assert len(server.paths) == 41


async def test_a_refusal_is_retried_for_a_while_then_the_failure_stands() -> None:
    forbidden = ApiError(403, "Forbidden", "cannot get pods")
    server = Reads.scripted(*[forbidden] * 100)
    assert await _landed(server) is Landed.UNKNOWN
    # Asked at the start, then on each wake (1, 2, 4, 4, ... s, with jitter) until
    # 30 s after the first refusal.
    assert 8 <= len(server.paths) <= 40


async def test_a_refusal_that_clears_is_answered() -> None:
    forbidden = ApiError(403, "Forbidden", "RBAC caches not yet filled")
    server = Reads.scripted(forbidden, forbidden, make_pod("p", "ns").uid("u1").raw())
    assert await _landed(server) is Landed.NOT_BOUND


@pytest.mark.parametrize(
    ("exc", "applied"),
    [
        pytest.param(TransportError("closed", broken=True), True, id="cut-after-sending"),
        pytest.param(TransportError("no answer in time", timeout=True), True, id="timeout"),
        pytest.param(ApiError(500, "InternalError", "etcd timeout"), True, id="500"),
        pytest.param(ApiError(504, "Timeout", "etcd slow"), True, id="504"),
        pytest.param(TransportError("connection refused"), False, id="refused"),
        pytest.param(ApiError(409, "Conflict", "already bound"), False, id="409"),
        pytest.param(ApiError(429, "TooManyRequests", "throttled"), False, id="429"),
        pytest.param(ApiError(404, "NotFound", "gone"), False, id="404"),
        pytest.param(ConnectionResetError(), True, id="reset-unwrapped"),
        pytest.param(ConnectionRefusedError(), False, id="refused-unwrapped"),
        pytest.param(ValueError("a bug"), False, id="not-a-request-failure"),
    ],
)
def test_which_failed_writes_may_have_been_applied(exc: Exception, applied: bool) -> None:
    assert may_have_been_applied(exc) is applied
