"""wait_for_api_server: kube-controller-manager's WaitForAPIServer, on a FakeClock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.client.probe import (
    ApiServerUnreachable,
    describe_transport_error,
    wait_for_api_server,
)
from asched.client.protocol import ApiError, TransportError
from asched.testing import FakeClient

HOST = "https://10.0.0.1:6443"


def refused() -> TransportError:
    err = TransportError("GET /version: ClientConnectorError: cannot connect")
    err.__cause__ = ConnectionRefusedError(111, "Connect call failed")
    return err


class ScriptedClient(FakeClient):
    """Answers GET /version with the next scripted outcome; the last one repeats."""

    def __init__(self, *outcomes: Exception | None) -> None:
        super().__init__()
        self.outcomes = list(outcomes)
        self.calls = 0

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        assert (method, path) == ("GET", "/version")
        self.calls += 1
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        await anyio.lowlevel.checkpoint()
        if outcome is not None:
            raise outcome
        return {"major": "1", "minor": "37"}


async def probe(client: ScriptedClient, clock: FakeClock, wait: float) -> BaseException | None:
    """Run the probe to its end, moving the fake clock whenever it sleeps."""
    outcome: BaseException | None = None
    done = anyio.Event()

    async def run() -> None:
        nonlocal outcome
        try:
            await wait_for_api_server(client, HOST, clock, wait=wait)
        except ApiServerUnreachable as err:
            outcome = err
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while not done.is_set():
            await anyio.wait_all_tasks_blocked()
            if not done.is_set():
                clock.advance(0.5)
    return outcome


async def test_returns_once_the_server_answers_within_the_wait() -> None:
    clock = FakeClock()
    client = ScriptedClient(refused(), refused(), None)
    start = clock.now()

    assert await probe(client, clock, wait=10.0) is None
    assert client.calls == 3
    assert clock.now() - start == pytest.approx(2.0)  # polled once a second


async def test_gives_up_after_the_wait_naming_host_and_cause() -> None:
    clock = FakeClock()
    client = ScriptedClient(refused())
    start = clock.now()

    err = await probe(client, clock, wait=10.0)

    assert str(err) == f"cannot reach the API server at {HOST}: connection refused"
    assert clock.now() - start == pytest.approx(10.0)
    assert client.calls == 11  # at 0, 1, ..., 10 seconds


async def test_zero_wait_tries_once() -> None:
    client = ScriptedClient(refused())

    err = await probe(client, FakeClock(), wait=0.0)

    assert isinstance(err, ApiServerUnreachable)
    assert client.calls == 1


async def test_wrong_credentials_fail_at_once() -> None:
    client = ScriptedClient(ApiError(401, "Unauthorized", "", "GET", "/version"))

    err = await probe(client, FakeClock(), wait=10.0)

    assert str(err) == f"the API server at {HOST} refused the credentials: 401 Unauthorized"
    assert client.calls == 1


@pytest.mark.parametrize(
    ("answer", "calls"),
    [
        pytest.param(ApiError(403, "Forbidden", "", "GET", "/version"), 1, id="403-is-an-answer"),
        pytest.param(ApiError(404, "NotFound", "", "GET", "/version"), 1, id="404-is-an-answer"),
    ],
)
async def test_other_client_errors_count_as_an_answer(answer: ApiError, calls: int) -> None:
    client = ScriptedClient(answer)

    assert await probe(client, FakeClock(), wait=10.0) is None
    assert client.calls == calls


async def test_a_server_error_is_waited_out_and_named() -> None:
    client = ScriptedClient(ApiError(503, "Service Unavailable", "", "GET", "/version"))

    err = await probe(client, FakeClock(), wait=2.0)

    assert str(err) == f"cannot reach the API server at {HOST}: it answers 503 Service Unavailable"


def _chained(cause: BaseException) -> TransportError:
    err = TransportError("GET /version: failed")
    err.__cause__ = cause
    return err


@pytest.mark.parametrize(
    ("err", "words"),
    [
        pytest.param(refused(), "connection refused", id="refused"),
        pytest.param(
            _chained(OSError(111, "Connect call failed ('127.0.0.1', 1)")),
            "connection refused",
            id="refused-as-the-event-loop-says-it",
        ),
        pytest.param(_chained(TimeoutError()), "timed out", id="timeout"),
        pytest.param(_chained(ConnectionResetError(104, "reset")), "connection reset", id="reset"),
        pytest.param(
            _chained(OSError(113, "No route to host")), "no route to host", id="other-oserror"
        ),
        pytest.param(TransportError("GET /version: no cause"), "GET /version: no cause", id="bare"),
    ],
)
def test_describe_transport_error(err: TransportError, words: str) -> None:
    assert describe_transport_error(err) == words
