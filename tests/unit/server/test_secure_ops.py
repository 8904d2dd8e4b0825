"""The ops server over HTTPS behind the delegated gate, on a real loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import anyio
import orjson
import pytest
from aiohttp import web

from asched.base.clock import FakeClock
from asched.metrics import Metrics
from asched.server.authn import TOKEN_REVIEWS
from asched.server.authz import SUBJECT_ACCESS_REVIEWS
from asched.server.ops import OpsServer
from asched.server.options import ServingOptions, serving_gate
from asched.server.tls import ServingCertificate, build_context
from tests.unit.server.fakes import ReviewServer, access_review, token_review
from tests.unit.server.test_tls import PAIR_A, _client_context


def _token(body: dict[str, Any]) -> dict[str, Any]:
    return token_review({"scraper": "prom", "nobody": "nobody"}.get(body["spec"]["token"]))


def _access(body: dict[str, Any]) -> dict[str, Any]:
    return access_review(body["spec"]["user"] == "prom")


async def _inspector(_request: web.Request) -> web.Response:
    return web.Response(text="inspector")


@pytest.fixture
async def server() -> AsyncIterator[tuple[OpsServer, ServingCertificate, ReviewServer]]:
    api = ReviewServer({TOKEN_REVIEWS: _token, SUBJECT_ACCESS_REVIEWS: _access})
    cert = ServingCertificate(PAIR_A, build_context(PAIR_A))
    ops = OpsServer(
        Metrics(process_metrics=False),
        host="127.0.0.1",
        port=0,
        certificate=cert,
        gate=serving_gate(ServingOptions(), api, FakeClock()),
        routes=[web.get("/inspector/", _inspector)],
    )
    async with ops:
        yield ops, cert, api


@pytest.mark.parametrize(
    ("path", "token", "status"),
    [
        pytest.param("/healthz", None, 200, id="healthz-anonymous"),
        pytest.param("/readyz", None, 200, id="readyz-anonymous"),
        pytest.param("/livez", None, 200, id="livez-anonymous"),
        pytest.param("/metrics", None, 401, id="metrics-anonymous"),
        pytest.param("/metrics", "forged", 401, id="metrics-bad-token"),
        pytest.param("/metrics", "nobody", 403, id="metrics-not-allowed"),
        pytest.param("/metrics", "scraper", 200, id="metrics-allowed"),
        pytest.param("/inspector/", None, 401, id="added-route-anonymous"),
        pytest.param("/inspector/", "nobody", 403, id="added-route-not-allowed"),
        pytest.param("/inspector/", "scraper", 200, id="added-route-allowed"),
        pytest.param("/nope", None, 401, id="unknown-path-anonymous"),
        pytest.param("/nope", "scraper", 404, id="unknown-path-allowed"),
    ],
)
async def test_https_requests(
    server: tuple[OpsServer, ServingCertificate, ReviewServer],
    path: str,
    token: str | None,
    status: int,
) -> None:
    ops, cert, _ = server
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    connector = aiohttp.TCPConnector(ssl=_client_context(cert.pair))
    async with (
        aiohttp.ClientSession(connector=connector) as http,
        http.get(f"{ops.url}{path}", headers=headers) as resp,
    ):
        body = await resp.read()
    assert resp.status == status
    if status in (401, 403):
        assert orjson.loads(body)["code"] == status


async def test_plain_http_to_the_https_port_gets_no_metrics(
    server: tuple[OpsServer, ServingCertificate, ReviewServer],
) -> None:
    ops, _, _ = server
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientError):
            async with http.get(f"http://127.0.0.1:{ops.port}/metrics") as resp:
                await resp.read()


@pytest.mark.parametrize(
    "raw_path",
    [
        "/healthz/../metrics",
        "/healthz/%2e%2e/metrics",
        "/debug/../metrics",
        "/debug/%2E%2E/metrics",
    ],
)
async def test_dot_segments_never_reach_metrics_through_an_allowed_path(raw_path: str) -> None:
    """The gate and the router see the same, unnormalized path: an always-allowed prefix
    cannot be walked out of to a protected handler."""
    api = ReviewServer({TOKEN_REVIEWS: _token, SUBJECT_ACCESS_REVIEWS: _access})
    opts = ServingOptions(always_allow_paths=("/healthz", "/debug/*"))
    ops = OpsServer(
        Metrics(process_metrics=False),
        host="127.0.0.1",
        port=0,
        gate=serving_gate(opts, api, FakeClock()),
    )
    async with ops, await anyio.connect_tcp("127.0.0.1", ops.port) as stream:
        # Sent raw: an HTTP client library would normalize the path before sending it.
        await stream.send(
            f"GET {raw_path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        with anyio.fail_after(5):
            try:
                while True:
                    answer += await stream.receive()
            except anyio.EndOfStream:
                pass
    status = answer.split(b"\r\n", 1)[0]
    assert status in (b"HTTP/1.1 401 Unauthorized", b"HTTP/1.1 404 Not Found"), status
    assert b"scheduler_" not in answer
