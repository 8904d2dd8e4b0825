"""OpsServer: probe and metrics endpoints on a real loopback port."""

from __future__ import annotations

import aiohttp
import pytest

from asched.metrics import Metrics
from asched.server.ops import Check, OpsServer


def ok() -> tuple[bool, str]:
    return True, ""


def not_synced() -> tuple[bool, str]:
    return False, "informer caches not synced"


def stuck() -> tuple[bool, str]:
    return False, "failed election to renew leadership on lease asched"


async def get(server: OpsServer, path: str) -> tuple[int, str, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{server.port}{path}") as response,
    ):
        return response.status, await response.text(), response.headers["Content-Type"]


@pytest.mark.parametrize(
    ("path", "readiness", "liveness", "status", "body"),
    [
        pytest.param("/healthz", ok, ok, 200, "ok", id="healthz"),
        pytest.param("/livez", ok, ok, 200, "ok", id="livez"),
        pytest.param("/healthz", not_synced, ok, 200, "ok", id="healthz-ignores-readiness"),
        pytest.param("/healthz", ok, stuck, 500, stuck()[1], id="healthz-fails-with-reason"),
        pytest.param("/livez", ok, stuck, 500, stuck()[1], id="livez-fails-with-reason"),
        pytest.param("/readyz", ok, ok, 200, "ok", id="readyz-ready"),
        pytest.param("/readyz", not_synced, ok, 500, not_synced()[1], id="readyz-not-ready"),
    ],
)
async def test_probes(path: str, readiness: Check, liveness: Check, status: int, body: str) -> None:
    server = OpsServer(
        Metrics(process_metrics=False),
        readiness=readiness,
        liveness=liveness,
        host="127.0.0.1",
        port=0,
    )

    async with server:
        got_status, got_body, _ = await get(server, path)

    assert (got_status, got_body) == (status, body)


async def test_readiness_is_asked_on_every_probe() -> None:
    state = {"ready": False}
    server = OpsServer(
        Metrics(process_metrics=False),
        readiness=lambda: (state["ready"], "" if state["ready"] else "waiting"),
        host="127.0.0.1",
        port=0,
    )

    async with server:
        before = await get(server, "/readyz")
        state["ready"] = True
        after = await get(server, "/readyz")

    assert (before[0], after[0]) == (500, 200)


async def test_metrics_endpoint_serves_the_text_format() -> None:
    metrics = Metrics(process_metrics=False)
    metrics.observe_attempt("scheduled", "default-scheduler", 0.01)
    server = OpsServer(metrics, host="127.0.0.1", port=0)

    async with server:
        status, body, content_type = await get(server, "/metrics")

    assert status == 200
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    assert (
        'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0'
        in body
    )


async def test_port_is_bound_while_running_and_freed_after() -> None:
    server = OpsServer(Metrics(process_metrics=False), host="127.0.0.1", port=0)

    async with server:
        port = server.port
        assert port > 0
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.port

    # The port is free again: a new server can bind it.
    again = OpsServer(Metrics(process_metrics=False), host="127.0.0.1", port=port)
    async with again:
        assert again.port == port
