"""RestClient's HTTP plumbing, against a small local aiohttp server.

These check what goes over the wire (paths, headers, bodies) and how answers are turned
into results and errors; behaviour against a real kube-apiserver is covered by
tests/integration.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from aiohttp import web

from asched.base.clock import FakeClock
from asched.client import kproto
from asched.client.connection import Connection
from asched.client.protocol import (
    ApiError,
    FailureKind,
    RequestError,
    TransportError,
    failure_fields,
    failure_kind,
    write_target_gone,
)
from asched.client.rest import RestClient, resource_of
from asched.client.retry import RetryPolicy, retry_after_seconds
from tests.clocks import JumpingClock

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeServer:
    url: str
    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def on(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method, path)] = handler

    def reply(self, method: str, path: str, status: int, body: Any) -> None:
        async def handler(_: web.Request) -> web.StreamResponse:
            return web.Response(
                status=status, body=orjson.dumps(body), content_type="application/json"
            )

        self.on(method, path, handler)


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    fake = FakeServer(url="")

    async def dispatch(request: web.Request) -> web.StreamResponse:
        fake.seen.append(
            Seen(
                request.method,
                request.path,
                dict(request.query),
                dict(request.headers),
                await request.read(),
            )
        )
        handler = fake.routes.get((request.method, request.path))
        if handler is None:
            return web.Response(status=404, text="no route")
        return await handler(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", dispatch)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    fake.url = f"http://127.0.0.1:{port}"
    yield fake
    await runner.cleanup()


# Requests go over asched.client.h1's pool ("h1"); with a proxy configured they go over
# aiohttp ("aiohttp"). Both must put the same bytes on the wire.
@pytest.fixture(params=[True, False], ids=["h1", "aiohttp"])
async def client(server: FakeServer, request: pytest.FixtureRequest) -> AsyncIterator[RestClient]:
    connection = Connection.from_token(server.url, "tok")
    async with RestClient(connection, qps=-1, burst=0, lean_http=request.param) as c:
        yield c


STATUS_409 = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "code": 409,
    "reason": "Conflict",
    "message": "pod p is already assigned to node n0",
}


async def test_request_sends_json_and_decodes_the_answer(
    server: FakeServer, client: RestClient
) -> None:
    server.reply("POST", "/api/v1/namespaces/ns/configmaps", 201, {"metadata": {"name": "cm"}})

    got = await client.request(
        "POST",
        "/api/v1/namespaces/ns/configmaps",
        body={"metadata": {"name": "cm"}},
        params={"dryRun": "All"},
    )

    assert got == {"metadata": {"name": "cm"}}
    sent = server.seen[-1]
    assert sent.query == {"dryRun": "All"}
    assert orjson.loads(sent.body) == {"metadata": {"name": "cm"}}
    assert sent.headers["Authorization"] == "Bearer tok"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.headers["Accept"] == "application/json"


async def test_query_in_the_path_and_names_that_need_escaping(
    server: FakeServer, client: RestClient
) -> None:
    server.reply("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:a b", 200, {})

    await client.request(
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:a b?limit=1",
        params={"labelSelector": "app in (x,y)"},
    )

    sent = server.seen[-1]
    assert sent.path == "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:a b"
    assert sent.query == {"limit": "1", "labelSelector": "app in (x,y)"}


BINDING = {
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "p", "namespace": "ns", "uid": "uid-1"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"},
}


async def test_bind_posts_a_protobuf_binding_with_uid_precondition(
    server: FakeServer, client: RestClient
) -> None:
    server.reply(
        "POST",
        "/api/v1/namespaces/ns/pods/p/binding",
        201,
        {"kind": "Status", "status": "Success", "code": 201},
    )

    await client.bind("ns", "p", "uid-1", "node-a")

    sent = server.seen[-1]
    assert sent.headers["Content-Type"] == kproto.PROTOBUF
    assert sent.body == kproto.encode(BINDING)


async def test_json_content_type_sends_json_bindings_and_events(server: FakeServer) -> None:
    server.reply("POST", "/api/v1/namespaces/ns/pods/p/binding", 201, {"kind": "Status"})
    server.reply("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", 201, {"kind": "Event"})
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}}
    connection = Connection.from_token(server.url, "tok")
    async with RestClient(connection, qps=-1, burst=0, content_type="application/json") as c:
        await c.bind("ns", "p", "uid-1", "node-a")
        await c.request("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", body=event)

    assert [s.headers["Content-Type"] for s in server.seen] == ["application/json"] * 2
    assert [orjson.loads(s.body) for s in server.seen] == [BINDING, event]


async def test_events_go_as_protobuf_and_other_kinds_as_json(
    server: FakeServer, client: RestClient
) -> None:
    server.reply("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", 201, {"kind": "Event"})
    server.reply("POST", "/api/v1/namespaces/ns/configmaps", 201, {"kind": "ConfigMap"})
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}}
    odd_event = {**event, "deprecatedCount": 1}  # no schema field for it: JSON, not lost
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}

    assert await client.request(
        "POST", "/apis/events.k8s.io/v1/namespaces/ns/events", body=event
    ) == {"kind": "Event"}
    await client.request("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", body=odd_event)
    await client.request("POST", "/api/v1/namespaces/ns/configmaps", body=config_map)

    first, second, third = server.seen
    assert (first.headers["Content-Type"], first.body) == (kproto.PROTOBUF, kproto.encode(event))
    assert second.headers["Content-Type"] == "application/json"
    assert orjson.loads(second.body) == odd_event
    assert third.headers["Content-Type"] == "application/json"
    assert orjson.loads(third.body) == config_map
    # Answers are still asked for, and read, as JSON.
    assert {s.headers["Accept"] for s in server.seen} == {"application/json"}


async def test_bind_conflict_is_an_api_error(server: FakeServer, client: RestClient) -> None:
    server.reply("POST", "/api/v1/namespaces/ns/pods/p/binding", 409, STATUS_409)

    with pytest.raises(ApiError) as raised:
        await client.bind("ns", "p", "uid-1", "node-a")

    assert raised.value.conflict
    assert (raised.value.reason, raised.value.message) == ("Conflict", STATUS_409["message"])


@pytest.mark.parametrize(
    ("patch_type", "content_type"),
    [
        pytest.param("strategic", "application/strategic-merge-patch+json", id="strategic"),
        pytest.param("merge", "application/merge-patch+json", id="merge"),
        pytest.param("json", "application/json-patch+json", id="json"),
    ],
)
async def test_patch_content_types(
    server: FakeServer, client: RestClient, patch_type: Any, content_type: str
) -> None:
    server.reply("PATCH", "/api/v1/namespaces/ns/pods/p/status", 200, {})

    await client.patch("/api/v1/namespaces/ns/pods/p/status", {"status": {}}, patch_type)

    assert server.seen[-1].headers["Content-Type"] == content_type


def chunked(chunks: list[bytes], status: int = 200, cut: bool = False) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(status=status)
        await resp.prepare(request)
        for chunk in chunks:
            await resp.write(chunk)
            await anyio.sleep(0.001)  # separate TCP writes, so boundaries fall mid-line
        if cut and request.transport is not None:
            request.transport.abort()
            return resp
        await resp.write_eof()
        return resp

    return handler


async def test_stream_lines_reassembles_events(server: FakeServer, client: RestClient) -> None:
    events = [
        orjson.dumps(
            {
                "type": "ADDED",
                "object": {
                    "metadata": {"name": f"p{i}", "annotations": {"big": "x" * (100_000 * i)}}
                },
            }
        )
        + b"\n"
        for i in range(3)
    ]
    stream = b"".join(events)
    pieces = [stream[i : i + 7001] for i in range(0, len(stream), 7001)]
    server.on("GET", "/api/v1/pods", chunked(pieces))

    lines = [line async for line in client.stream_lines("/api/v1/pods", {"watch": "true"})]

    assert lines == [e.rstrip(b"\n") for e in events]
    assert server.seen[-1].query == {"watch": "true"}


async def test_stream_lines_error_status(server: FakeServer, client: RestClient) -> None:
    server.reply(
        "GET",
        "/api/v1/pods",
        410,
        {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
    )

    with pytest.raises(ApiError) as raised:
        _ = [line async for line in client.stream_lines("/api/v1/pods")]

    assert raised.value.gone


async def test_stream_cut_inside_an_event_is_a_transport_error(
    server: FakeServer, client: RestClient
) -> None:
    server.on("GET", "/api/v1/pods", chunked([b'{"type":"ADDED"}\n{"type":"MOD'], cut=True))
    got: list[bytes] = []

    async def read_all() -> None:
        async for line in client.stream_lines("/api/v1/pods"):
            got.append(line)

    with pytest.raises(TransportError):
        await read_all()

    assert got == [b'{"type":"ADDED"}']


async def test_watch_is_not_rate_limited(server: FakeServer) -> None:
    server.reply("GET", "/api/v1/nodes", 200, {"items": []})
    server.on("GET", "/api/v1/pods", chunked([b"{}\n"]))
    clock = FakeClock()  # never advanced: a second throttled request would wait for ever
    async with RestClient(
        Connection.from_token(server.url, "t"), qps=1, burst=1, clock=clock
    ) as client:
        await client.request("GET", "/api/v1/nodes")
        with anyio.fail_after(5):
            lines = [line async for line in client.stream_lines("/api/v1/pods")]
        assert lines == [b"{}"]
        with anyio.move_on_after(0.2) as scope:
            await client.request("GET", "/api/v1/nodes")
        assert scope.cancelled_caught, "the second request should wait for a token"


async def test_token_file_is_reread_once_a_minute(server: FakeServer, tmp_path: Path) -> None:
    server.reply("GET", "/version", 200, {})
    token = tmp_path / "token"
    token.write_text("one\n")
    clock = FakeClock()
    conn = Connection(host=server.url, token_file=token)

    async with RestClient(conn, qps=-1, burst=0, clock=clock) as client:
        await client.request("GET", "/version")
        token.write_text("two\n")
        await client.request("GET", "/version")
        clock.advance(61.0)
        await client.request("GET", "/version")

    assert [s.headers["Authorization"] for s in server.seen] == [
        "Bearer one",
        "Bearer one",
        "Bearer two",
    ]


async def test_list_pages_over_http(server: FakeServer, client: RestClient) -> None:
    async def pods(request: web.Request) -> web.StreamResponse:
        first = "continue" not in request.query
        body = {
            "metadata": {"resourceVersion": "7", **({"continue": "c"} if first else {})},
            "items": [{"metadata": {"name": "a" if first else "b"}}],
        }
        return web.json_response(body)

    server.on("GET", "/api/v1/pods", pods)

    pages = [p async for p in client.list_pages("/api/v1/pods", limit=1)]

    assert [p.items[0]["metadata"]["name"] for p in pages] == ["a", "b"]
    assert server.seen[0].query == {"limit": "1"}


async def test_success_that_is_not_json_is_a_transport_error(
    server: FakeServer, client: RestClient
) -> None:
    async def html(_: web.Request) -> web.StreamResponse:
        return web.Response(status=200, text="<html>proxy login</html>")

    server.on("GET", "/api/v1/nodes", html)

    with pytest.raises(TransportError, match="unreadable 200"):
        await client.request("GET", "/api/v1/nodes")


async def test_connection_refused_is_a_transport_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with RestClient(Connection.from_token(f"http://127.0.0.1:{port}", "t")) as client:
        with pytest.raises(TransportError):
            await client.request("GET", "/version")


# ---- failure classification ---------------------------------------------------------------


@dataclass
class Failures:
    """A FailureCounter that remembers what it was told."""

    seen: list[tuple[str, str, FailureKind]] = field(default_factory=list)

    def request_failed(self, verb: str, resource: str, kind: FailureKind) -> None:
        self.seen.append((verb, resource, kind))


@pytest.mark.parametrize(
    ("status", "kind", "retriable"),
    [
        pytest.param(409, FailureKind.CONFLICT, False, id="409"),
        pytest.param(410, FailureKind.GONE, False, id="410"),
        pytest.param(422, FailureKind.INVALID, False, id="422"),
        pytest.param(429, FailureKind.TOO_MANY_REQUESTS, True, id="429"),
        pytest.param(500, FailureKind.SERVER_ERROR, True, id="500"),
        pytest.param(503, FailureKind.SERVER_ERROR, True, id="503"),
        pytest.param(404, FailureKind.CLIENT_ERROR, False, id="404"),
        pytest.param(403, FailureKind.CLIENT_ERROR, False, id="403"),
    ],
)
async def test_non_2xx_answers_are_classified_and_counted_once(
    server: FakeServer, status: int, kind: FailureKind, retriable: bool
) -> None:
    body = {"kind": "Status", "code": status, "message": "no", "details": {"retryAfterSeconds": 2}}
    server.reply("POST", "/api/v1/namespaces/ns/pods/p/binding", status, body)
    server.reply("PATCH", "/api/v1/namespaces/ns/pods/p/status", status, body)
    failures = Failures()
    connection = Connection.from_token(server.url, "tok")
    async with RestClient(connection, qps=-1, burst=0, failures=failures) as client:
        with pytest.raises(RequestError) as bound:
            await client.bind("ns", "p", "uid-1", "n1")
        with pytest.raises(ApiError) as patched:
            await client.patch("/api/v1/namespaces/ns/pods/p/status", {})

    assert bound.value.kind == patched.value.kind == kind
    assert kind.retriable is retriable
    assert patched.value.retry_after == 2.0
    assert failures.seen == [("POST", "pods/binding", kind), ("PATCH", "pods/status", kind)]


async def test_no_answer_is_a_transport_failure_counted_by_resource() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    failures = Failures()
    connection = Connection.from_token(f"http://127.0.0.1:{port}", "t")
    async with RestClient(connection, failures=failures) as client:
        with pytest.raises(TransportError) as raised:
            await client.request("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", body={})

    assert raised.value.kind is FailureKind.TRANSPORT
    assert failure_kind(raised.value) is FailureKind.TRANSPORT
    assert failures.seen == [("POST", "events", FailureKind.TRANSPORT)]


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(TransportError("x", timeout=True), FailureKind.TIMEOUT, id="timeout"),
        pytest.param(TimeoutError(), FailureKind.TIMEOUT, id="TimeoutError"),
        pytest.param(ConnectionResetError(), FailureKind.TRANSPORT, id="OSError"),
        pytest.param(KeyError("x"), None, id="bug"),
    ],
)
def test_failure_kind(error: Exception, kind: FailureKind | None) -> None:
    assert failure_kind(error) is kind
    assert failure_fields(error)["kind"] == (kind.value if kind else "bug")


@pytest.mark.parametrize(
    ("error", "gone"),
    [
        pytest.param(ApiError(404, "NotFound", "x"), True, id="not-found"),
        pytest.param(ApiError(409, "Conflict", "uid"), True, id="uid-precondition"),
        pytest.param(ApiError(410, "Gone", "x"), False, id="expired-version"),
        pytest.param(ApiError(500, "InternalError", "x"), False, id="server-error"),
        pytest.param(TransportError("reset"), False, id="transport"),
        pytest.param(KeyError("bug"), False, id="bug"),
    ],
)
def test_write_target_gone(error: Exception, gone: bool) -> None:
    assert write_target_gone(error) is gone


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/api/v1/namespaces/ns/pods/p/binding", "pods/binding"),
        ("/api/v1/namespaces/ns/pods/p/status", "pods/status"),
        ("/api/v1/namespaces/ns/pods/p", "pods"),
        ("/api/v1/namespaces/ns/pods?limit=1", "pods"),
        ("/apis/events.k8s.io/v1/namespaces/ns/events/e.1", "events"),
        ("/apis/coordination.k8s.io/v1/namespaces/ns/leases/asched", "leases"),
        ("/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status", "resourceclaims/status"),
        ("/api/v1/nodes/n1", "nodes"),
        ("/api/v1/namespaces/ns", "namespaces"),
        ("/version", "other"),
    ],
)
def test_resource_of(path: str, resource: str) -> None:
    assert resource_of(path) == resource


# ---- client-go's retries ------------------------------------------------------------------

BINDING_PATH = "/api/v1/namespaces/ns/pods/p/binding"


def answers(*replies: tuple[int, str | None]) -> Handler:
    """A handler giving *replies* (status, Retry-After header) in turn, and the last one
    again once they run out."""
    script = list(replies)

    async def handler(_: web.Request) -> web.StreamResponse:
        status, retry_after = script.pop(0) if len(script) > 1 else script[0]
        headers = {} if retry_after is None else {"Retry-After": retry_after}
        body = {"kind": "Status", "code": status} if status >= 300 else {"kind": "Binding"}
        return web.Response(
            status=status, body=orjson.dumps(body), headers=headers, content_type=JSON_TYPE
        )

    return handler


JSON_TYPE = "application/json"


def retrying_client(
    server: FakeServer, lean: bool, clock: JumpingClock, failures: Failures | None = None
) -> RestClient:
    connection = Connection.from_token(server.url, "tok")
    return RestClient(
        connection, qps=-1, burst=0, clock=clock, lean_http=lean, failures=failures, timeout=60
    )


@pytest.mark.parametrize("lean", [True, False], ids=["h1", "aiohttp"])
@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        pytest.param([(429, "3"), (429, "2"), (201, None)], ([3.0, 2.0], None), id="429-twice"),
        pytest.param([(503, "1"), (201, None)], ([1.0], None), id="503-with-retry-after"),
        pytest.param([(500, None)], ([], 500), id="500-without-retry-after-at-once"),
        pytest.param([(429, None)], ([], 429), id="429-without-retry-after-at-once"),
        pytest.param([(429, "soon")], ([], 429), id="retry-after-not-a-number"),
        pytest.param([(409, "1")], ([], 409), id="409-never"),
        pytest.param([(429, "0")], ([0.0] * 10, 429), id="gives-up-after-ten-retries"),
        pytest.param([(429, "61")], ([], 429), id="no-wait-past-the-timeout"),
    ],
)
async def test_429_and_5xx_with_retry_after_are_retried_like_client_go(
    server: FakeServer,
    lean: bool,
    replies: list[tuple[int, str | None]],
    expected: tuple[list[float], int | None],
) -> None:
    waits, status = expected
    server.on("POST", BINDING_PATH, answers(*replies))
    clock = JumpingClock()
    failures = Failures()
    async with retrying_client(server, lean, clock, failures) as client:
        if status is None:
            await client.bind("ns", "p", "u", "n1")
        else:
            with pytest.raises(ApiError) as raised:
                await client.bind("ns", "p", "u", "n1")
            assert raised.value.status == status

    assert clock.slept == waits
    assert len(server.seen) == len(waits) + 1
    # Counted once, for the failure that reached the caller; never for a retry.
    assert len(failures.seen) == (0 if status is None else 1)


@pytest.mark.parametrize(
    ("method", "broken", "retries", "wait"),
    [
        pytest.param("GET", True, 0, 1.0, id="broken-GET"),
        pytest.param("GET", True, 10, None, id="broken-GET-eleventh"),
        pytest.param("GET", False, 0, None, id="refused-GET"),
        pytest.param("POST", True, 0, None, id="broken-POST"),
        pytest.param("PATCH", True, 0, None, id="broken-PATCH"),
        pytest.param("DELETE", True, 0, None, id="broken-DELETE"),
    ],
)
def test_only_a_broken_get_is_retried_without_an_answer(
    method: str, broken: bool, retries: int, wait: float | None
) -> None:
    error = TransportError("cut", broken=broken)
    assert RetryPolicy().after_failure(method, error, retries) == wait


@pytest.mark.parametrize(
    ("lean", "waits"),
    [
        pytest.param(True, [1.0, 1.0], id="h1"),
        # aiohttp replays an idempotent request once itself when its connection closes
        # without an answer; our retry comes after that.
        pytest.param(False, [1.0], id="aiohttp"),
    ],
)
async def test_a_get_whose_connection_breaks_is_sent_again_a_post_is_not(
    server: FakeServer, lean: bool, waits: list[float]
) -> None:
    cut = {"GET": 2, "POST": 1}

    async def breaking(request: web.Request) -> web.StreamResponse:
        if cut[request.method]:
            cut[request.method] -= 1
            assert request.transport is not None
            request.transport.abort()  # after the request arrived: no answer at all
        return web.json_response({"kind": "Node"})

    server.on("GET", "/api/v1/nodes/n1", breaking)
    server.on("POST", "/api/v1/nodes", breaking)
    clock = JumpingClock()
    async with retrying_client(server, lean, clock) as client:
        node = await client.get("/api/v1/nodes/n1")
        with pytest.raises(TransportError) as raised:
            await client.request("POST", "/api/v1/nodes", body={})

    assert node == {"kind": "Node"}
    assert clock.slept == waits
    assert raised.value.broken
    assert [s.method for s in server.seen] == ["GET", "GET", "GET", "POST"]


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("5", 5, id="seconds"),
        pytest.param(" 0 ", 0, id="zero"),
        pytest.param("1.5", None, id="fraction"),
        pytest.param("Wed, 21 Oct 2026 07:28:00 GMT", None, id="http-date"),
    ],
)
def test_retry_after_is_whole_seconds_as_client_go_reads_it(
    header: str | None, seconds: int | None
) -> None:
    assert retry_after_seconds(header) == seconds
