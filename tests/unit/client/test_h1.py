"""asched.client.h1 against a loopback server that writes exactly the bytes each test
chooses: keep-alive reuse, chunked and gzip answers, the connection limit, retries of a
reused connection the server dropped, and what a cancelled request leaves behind.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import ssl
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from asched.client import h1, tlssession
from asched.client.connection import Connection
from asched.client.rest import RestClient
from asched.server.certgen import generate_self_signed
from asched.server.tls import CertKeyPair, build_context

# What the server does with one request on one connection: write an answer (bytes), or
# None to close the connection without answering, or "hang" to never answer.
Answer = bytes | None | str
Script = Callable[["Server", int, bytes], Awaitable[Answer]]
Serve = Callable[[Script], Awaitable["Server"]]


def ok(body: bytes = b"{}", *, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


@dataclass
class Server:
    script: Script
    port: int = 0
    connections: int = 0
    open_now: int = 0
    most_open: int = 0
    requests: list[tuple[int, bytes]] = field(default_factory=list)
    # Set when the test ends: a "hang" answer gives up and every connection closes, so no
    # handler outlives its test (a leftover one, collected during a later test, failed
    # that test with an unclosed-transport warning).
    release: asyncio.Event = field(default_factory=asyncio.Event)
    handlers: set[asyncio.Task[None]] = field(default_factory=set)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        self.writers.append(writer)
        self.connections += 1
        conn_id = self.connections
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = head + (await reader.readexactly(length) if length else b"")
                self.requests.append((conn_id, request))
                answer = await self.script(self, conn_id, request)
                if answer is None:
                    return
                if answer == "hang":
                    await self.release.wait()
                    return
                assert isinstance(answer, bytes)
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            self.open_now -= 1
            writer.close()
            self.handlers.discard(task)


async def _servers(tls: ssl.SSLContext | None) -> AsyncIterator[Serve]:
    servers: list[tuple[asyncio.Server, Server]] = []

    async def start(script: Script) -> Server:
        server = Server(script)
        srv = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
        server.port = srv.sockets[0].getsockname()[1]
        servers.append((srv, server))
        return server

    yield start
    for srv, server in servers:
        srv.close()
        server.release.set()
        for writer in server.writers:
            writer.close()
        if server.handlers:
            await asyncio.wait(server.handlers, timeout=5)
        assert not server.handlers, "a test server's handler did not finish"


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    async for start in _servers(None):
        yield start


@pytest.fixture(scope="module")
def pair() -> CertKeyPair:
    return generate_self_signed("localhost", ips=("127.0.0.1",))


@pytest.fixture
async def serve_tls(pair: CertKeyPair) -> AsyncIterator[Serve]:
    async for start in _servers(build_context(pair)):
        yield start


def tls_pool_for(server: Server, pair: CertKeyPair, limit: int = 4) -> h1.H1Pool:
    context = tlssession.client_context(cadata=pair.cert_pem.decode())
    endpoint = h1.endpoint(f"https://127.0.0.1:{server.port}", context, None)
    return h1.H1Pool(endpoint, limit=limit, connect_timeout=5.0)


def pool_for(server: Server, limit: int = 4) -> h1.H1Pool:
    endpoint = h1.endpoint(f"http://127.0.0.1:{server.port}", False, None)
    return h1.H1Pool(endpoint, limit=limit, connect_timeout=5.0)


def get(path: str = "/x") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode()


async def test_sequential_requests_reuse_one_connection(serve: Serve) -> None:
    async def script(_: Server, __: int, request: bytes) -> Answer:
        return ok(b'{"path": "' + request.split(b" ")[1] + b'"}')

    server = await serve(script)
    pool = pool_for(server)
    answers = [(await pool.round_trip("GET", get(f"/r{i}"), None))[:2] for i in range(3)]
    assert answers == [(200, b'{"path": "/r%d"}' % i) for i in range(3)]
    assert server.connections == 1
    await pool.close()


async def test_post_body_is_sent_after_the_head(serve: Serve) -> None:
    async def script(_: Server, __: int, request: bytes) -> Answer:
        return ok(request.split(b"\r\n\r\n", 1)[1])

    server = await serve(script)
    pool = pool_for(server)
    head = b"POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n"
    assert (await pool.round_trip("POST", head, b"hello"))[:2] == (200, b"hello")
    await pool.close()


async def test_chunked_and_gzip_answers_are_reassembled(serve: Serve) -> None:
    payload = b'{"items": [' + b",".join(b"%d" % i for i in range(2000)) + b"]}"
    packed = gzip.compress(payload)

    async def script(_: Server, __: int, request: bytes) -> Answer:
        if b"/chunked" in request:
            return (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
            )
        return ok(packed, extra="Content-Encoding: gzip\r\n")

    server = await serve(script)
    pool = pool_for(server)
    assert (await pool.round_trip("GET", get("/chunked"), None))[:2] == (200, b"hello world")
    assert (await pool.round_trip("GET", get("/gzip"), None))[:2] == (200, payload)
    assert server.connections == 1
    await pool.close()


async def test_connection_close_answer_is_not_reused(serve: Serve) -> None:
    async def script(_: Server, __: int, ___: bytes) -> Answer:
        return ok(extra="Connection: close\r\n")

    server = await serve(script)
    pool = pool_for(server)
    for _ in range(3):
        assert (await pool.round_trip("GET", get(), None))[0] == 200
    assert server.connections == 3
    await pool.close()


async def test_never_more_connections_than_the_limit(serve: Serve) -> None:
    async def script(server: Server, _: int, __: bytes) -> Answer:
        await asyncio.sleep(0)  # let the other requests pile up behind the limit
        return ok()

    server = await serve(script)
    pool = pool_for(server, limit=2)
    results = await asyncio.gather(*(pool.round_trip("GET", get(), None) for _ in range(12)))
    assert [r[:2] for r in results] == [(200, b"{}")] * 12
    assert server.most_open <= 2
    assert pool.open_connections <= 2
    await pool.close()


async def test_dropped_reused_connection_retries_a_get_once(serve: Serve) -> None:
    async def script(_: Server, conn_id: int, __: bytes) -> Answer:
        # The first connection answers once, then closes on the second request unanswered.
        served_here = sum(1 for c, _ in server.requests if c == conn_id)
        return ok() if conn_id > 1 or served_here == 1 else None

    server = await serve(script)
    pool = pool_for(server)
    assert (await pool.round_trip("GET", get(), None))[:2] == (200, b"{}")
    assert (await pool.round_trip("GET", get(), None))[:2] == (200, b"{}")
    assert server.connections == 2
    assert len(server.requests) == 3  # the dropped one was sent again
    await pool.close()


async def test_dropped_reused_connection_fails_a_post(serve: Serve) -> None:
    async def script(_: Server, conn_id: int, __: bytes) -> Answer:
        served_here = sum(1 for c, _ in server.requests if c == conn_id)
        return ok() if served_here == 1 else None

    server = await serve(script)
    pool = pool_for(server)
    head = b"POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n"
    assert (await pool.round_trip("POST", head, b"{}"))[:2] == (200, b"{}")
    with pytest.raises(h1.H1Error, match="closed before the answer"):
        await pool.round_trip("POST", head, b"{}")
    assert len(server.requests) == 2  # a POST is never sent twice
    assert (await pool.round_trip("POST", head, b"{}"))[:2] == (200, b"{}")
    await pool.close()


async def test_cancelled_request_closes_its_connection_and_frees_the_slot(serve: Serve) -> None:
    async def script(_: Server, __: int, request: bytes) -> Answer:
        return "hang" if b"/slow" in request else ok()

    server = await serve(script)
    pool = pool_for(server, limit=1)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await pool.round_trip("GET", get("/slow"), None)
    # The only slot is free again, and the answer to /slow can never reach this request.
    assert (await pool.round_trip("GET", get("/fast"), None))[:2] == (200, b"{}")
    assert server.connections == 2
    assert pool.open_connections == 1
    await pool.close()


class Now:
    """The pool's clock, moved by hand; the sweep is run by hand too (expire_overdue)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def timed_pool(server: Server, now: Now, limit: int = 1) -> h1.H1Pool:
    endpoint = h1.endpoint(f"http://127.0.0.1:{server.port}", False, None)
    # A sweep period no test reaches: only the tests' own expire_overdue calls sweep.
    return h1.H1Pool(endpoint, limit=limit, connect_timeout=5.0, now=now, sweep_every=3600)


async def test_an_answer_past_the_timeout_fails_and_frees_the_slot(serve: Serve) -> None:
    arrived = asyncio.Event()

    async def script(_: Server, __: int, request: bytes) -> Answer:
        arrived.set()
        return "hang" if b"/slow" in request else ok()

    server = await serve(script)
    now = Now()
    pool = timed_pool(server, now)
    slow = asyncio.create_task(pool.round_trip("GET", get("/slow"), None, timeout=60))
    await asyncio.wait_for(arrived.wait(), 5)
    now.t += 59
    pool.expire_overdue()
    await asyncio.sleep(0)
    assert not slow.done()  # not yet due
    sweep = pool._sweep
    assert sweep is not None  # re-armed: something still waits
    pool.expire_overdue()
    assert sweep.cancelled()  # one chain of sweeps, never two
    assert pool._sweep is not sweep
    now.t += 2
    pool.expire_overdue()
    await asyncio.wait({slow}, timeout=5)  # the sweep already failed it: no waiting
    with pytest.raises(TimeoutError):
        slow.result()
    # Its connection is closed (its answer may still come) and the one slot is free.
    assert (await pool.round_trip("GET", get("/fast"), None, timeout=60))[:2] == (200, b"{}")
    assert server.connections == 2
    assert pool._deadlines == {}
    await pool.close()


async def test_the_wait_for_a_connection_counts_toward_the_timeout(serve: Serve) -> None:
    gate, arrived = asyncio.Event(), asyncio.Event()

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        arrived.set()
        await gate.wait()
        return ok()

    server = await serve(script)
    now = Now()
    pool = timed_pool(server, now)
    first = asyncio.create_task(pool.round_trip("GET", get(), None, timeout=600))
    await asyncio.wait_for(arrived.wait(), 5)
    queued = asyncio.create_task(pool.round_trip("GET", get(), None, timeout=10))
    await asyncio.sleep(0)
    now.t += 11
    pool.expire_overdue()
    await asyncio.wait({queued}, timeout=5)
    with pytest.raises(TimeoutError):
        queued.result()
    gate.set()
    assert (await first)[:2] == (200, b"{}")
    # The queued request never reached the server and took no slot with it.
    assert len(server.requests) == 1
    assert (await pool.round_trip("GET", get(), None, timeout=10))[:2] == (200, b"{}")
    assert server.connections == 1
    await pool.close()


async def test_the_sweep_runs_only_while_something_waits(serve: Serve) -> None:
    server = await serve(lambda _, __, ___: _ok_now())
    pool = timed_pool(server, Now())
    assert (await pool.round_trip("GET", get(), None, timeout=10))[:2] == (200, b"{}")
    assert pool._deadlines == {}
    pool.expire_overdue()  # finds nothing and does not re-arm
    assert pool._sweep is None
    await pool.close()


async def _ok_now() -> Answer:
    return ok()


async def test_waiter_cancelled_while_queued_does_not_leak_a_slot(serve: Serve) -> None:
    gate = asyncio.Event()

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        await gate.wait()
        return ok()

    server = await serve(script)
    pool = pool_for(server, limit=1)
    first = asyncio.create_task(pool.round_trip("GET", get(), None))
    await asyncio.sleep(0.01)
    queued = asyncio.create_task(pool.round_trip("GET", get(), None))
    await asyncio.sleep(0.01)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    gate.set()
    assert (await first)[:2] == (200, b"{}")
    assert (await pool.round_trip("GET", get(), None))[:2] == (200, b"{}")
    assert server.connections == 1
    await pool.close()


async def test_malformed_answer_is_an_error(serve: Serve) -> None:
    async def script(_: Server, __: int, ___: bytes) -> Answer:
        return b"NOT HTTP AT ALL\r\n\r\n"

    server = await serve(script)
    pool = pool_for(server)
    with pytest.raises(h1.H1Error, match="malformed answer"):
        await pool.round_trip("GET", get(), None)
    assert pool.open_connections == 0
    await pool.close()


# ---- TLS, done in memory by the connection (h1._Connection) -----------------------------


async def test_tls_requests_reuse_one_connection_and_reassemble_big_answers(
    serve_tls: Serve, pair: CertKeyPair
) -> None:
    # Bigger than one TLS record and than one read (_TLS_READ): many reads feed the parser.
    big = b'{"items": [' + b",".join(b"%d" % i for i in range(60_000)) + b"]}"

    async def script(_: Server, __: int, request: bytes) -> Answer:
        if b"/chunked" in request:
            return (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
            )
        if b"/big" in request:
            return ok(big)
        return ok(request.split(b"\r\n\r\n", 1)[1])  # a POST's body, echoed

    server = await serve_tls(script)
    pool = tls_pool_for(server, pair)
    assert (await pool.round_trip("GET", get("/chunked"), None))[:2] == (200, b"hello world")
    assert (await pool.round_trip("GET", get("/big"), None))[:2] == (200, big)
    head = b"POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 8\r\n\r\n"
    assert (await pool.round_trip("POST", head, b'{"a": 1}'))[:2] == (200, b'{"a": 1}')
    assert server.connections == 1
    assert len(server.requests) == 3
    await pool.close()


async def test_tls_to_an_untrusted_server_fails_naming_the_endpoint(serve_tls: Serve) -> None:
    async def script(_: Server, __: int, ___: bytes) -> Answer:
        return ok()

    server = await serve_tls(script)
    stranger = generate_self_signed("localhost", ips=("127.0.0.1",))  # another CA
    pool = tls_pool_for(server, stranger, limit=1)
    with pytest.raises(h1.H1Error, match=rf"connect 127.0.0.1:{server.port}: .*CERTIFICATE_VERIFY"):
        await pool.round_trip("GET", get(), None)
    assert pool.open_connections == 0
    assert server.requests == []
    await pool.close()


async def test_a_server_that_drops_the_handshake_is_an_error(pair: CertKeyPair) -> None:
    # A plain TCP server that closes every connection at once: the handshake never ends.
    async def drop(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    srv = await asyncio.start_server(drop, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    context = tlssession.client_context(cadata=pair.cert_pem.decode())
    pool = h1.H1Pool(
        h1.endpoint(f"https://127.0.0.1:{port}", context, None), limit=1, connect_timeout=5.0
    )
    with pytest.raises(h1.H1Error, match=f"connect 127.0.0.1:{port}: .*TLS handshake"):
        await pool.round_trip("GET", get(), None)
    assert pool.open_connections == 0
    srv.close()
    await pool.close()


async def test_a_handshake_past_the_connect_timeout_leaves_nothing_behind(
    pair: CertKeyPair,
) -> None:
    # A TCP server that never speaks TLS: the handshake waits until the connect timeout.
    held: list[asyncio.StreamWriter] = []

    async def silent(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    srv = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    context = tlssession.client_context(cadata=pair.cert_pem.decode())
    pool = h1.H1Pool(
        h1.endpoint(f"https://127.0.0.1:{port}", context, None), limit=1, connect_timeout=0.05
    )
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        with pytest.raises(h1.H1Error, match=f"connect 127.0.0.1:{port}: TimeoutError"):
            await pool.round_trip("GET", get(), None)
        assert pool.open_connections == 0
        for _ in range(3):  # the aborted transport reports connection_lost
            await asyncio.sleep(0)
        gc.collect()  # an unread failed handshake would be reported now
    finally:
        loop.set_exception_handler(None)
    assert [c.get("message") for c in reported] == []
    for writer in held:
        writer.close()
    srv.close()
    await pool.close()


async def test_refused_connection_names_the_endpoint() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    pool = h1.H1Pool(
        h1.endpoint(f"http://127.0.0.1:{port}", False, None), limit=1, connect_timeout=5.0
    )
    with pytest.raises(h1.H1Error, match=f"connect 127.0.0.1:{port}"):
        await pool.round_trip("GET", get(), None)
    assert pool.open_connections == 0


@pytest.mark.parametrize(
    ("url", "host", "port", "secure", "host_header"),
    [
        ("https://127.0.0.1:6443", "127.0.0.1", 6443, True, "127.0.0.1:6443"),
        ("https://api.example", "api.example", 443, True, "api.example"),
        ("http://localhost:8080", "localhost", 8080, False, "localhost:8080"),
        ("https://[::1]:6443", "::1", 6443, True, "[::1]:6443"),
    ],
    ids=["ip-port", "default-https-port", "plain-http", "ipv6"],
)
def test_endpoint_of_a_server_url(
    url: str, host: str, port: int, secure: bool, host_header: str
) -> None:
    endpoint = h1.endpoint(url, True, None)
    assert (endpoint.host, endpoint.port, endpoint.host_header) == (host, port, host_header)
    assert isinstance(endpoint.tls, ssl.SSLContext) is secure


def test_insecure_https_endpoint_skips_verification() -> None:
    endpoint = h1.endpoint("https://10.0.0.1", False, "kubernetes")
    assert endpoint.tls is not None
    assert endpoint.tls.verify_mode == ssl.CERT_NONE
    assert endpoint.server_hostname == "kubernetes"


def test_endpoint_rejects_a_url_without_scheme() -> None:
    with pytest.raises(ValueError, match="not an http"):
        h1.endpoint("127.0.0.1:6443", True, None)


async def test_an_answer_carries_its_retry_after_header(serve: Serve) -> None:
    async def script(_: Server, __: int, ___: bytes) -> Answer:
        return ok(extra="Retry-After: 7\r\n")

    server = await serve(script)
    pool = pool_for(server)
    answer = await pool.round_trip("GET", get(), None)
    assert (answer.status, answer.retry_after) == (200, "7")
    await pool.close()


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
async def test_a_dead_connection_is_freed_without_the_collector(
    tls: bool, serve: Serve, serve_tls: Serve, pair: CertKeyPair
) -> None:
    """A connection the server closed is freed by reference counting once the pool lets
    go of it: no cycle keeps it (and its TLS object and buffers) for a full collection,
    which asched's frozen generations (gctune.Sweeper) would postpone for up to an hour."""

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        return ok(extra="Connection: close\r\n")

    server = await (serve_tls if tls else serve)(script)
    pool = tls_pool_for(server, pair) if tls else pool_for(server)
    gc.collect()  # earlier tests' garbage, so only this test's connections are found
    gc.disable()
    try:
        assert (await pool.round_trip("GET", get(), None))[:2] == (200, b"{}")
        created = [o for o in gc.get_objects() if isinstance(o, h1._Connection)]
        assert created
        refs = [weakref.ref(c) for c in created]
        del created
        # The server closed it after the answer; let the loop deliver connection_lost.
        for _ in range(20):
            await asyncio.sleep(0.01)
        await pool.close()
        await asyncio.sleep(0.01)
        assert [r() for r in refs if r() is not None] == []
    finally:
        gc.enable()


async def test_a_burst_leaves_at_most_max_idle_connections_open(serve: Serve) -> None:
    """client-go keeps 25 idle connections per host: what a burst opened beyond that is
    closed as it comes back, not kept (with its TLS state) while a trickle lasts."""
    gate = asyncio.Event()

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        await gate.wait()
        return ok()

    server = await serve(script)
    endpoint = h1.endpoint(f"http://127.0.0.1:{server.port}", False, None)
    pool = h1.H1Pool(endpoint, limit=12, connect_timeout=5.0, max_idle=3)
    burst = [asyncio.create_task(pool.round_trip("GET", get(), None)) for _ in range(12)]
    for _ in range(100):
        if server.open_now == 12:
            break
        await asyncio.sleep(0.01)
    assert server.open_now == 12
    gate.set()
    assert all(answer[0] == 200 for answer in await asyncio.gather(*burst))
    assert pool.open_connections == 3
    for _ in range(100):
        if server.open_now == 3:
            break
        await asyncio.sleep(0.01)
    assert server.open_now == 3
    await pool.close()


async def test_connections_idle_past_the_limit_are_closed_by_the_next_request(
    serve: Serve,
) -> None:
    """Requests reuse the most recently returned connection; the longest-idle ones are
    closed once IDLE_SECONDS passed, though no request would ever have taken them."""

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        await asyncio.sleep(0.05)
        return ok()

    server = await serve(script)
    now = Now()
    pool = timed_pool(server, now, limit=3)
    await asyncio.gather(*(pool.round_trip("GET", get(), None) for _ in range(3)))
    assert pool.open_connections == 3
    now.t += 30
    await pool.round_trip("GET", get(), None)  # reuses one; two stay idle since t0
    assert pool.open_connections == 3
    now.t += h1.IDLE_SECONDS - 10  # the two: idle 60 s; the reused one: 30 s
    await pool.round_trip("GET", get(), None)
    assert pool.open_connections == 1
    assert server.connections == 3  # the reused one served it: none was opened
    await pool.close()


@pytest.mark.parametrize(
    "headers",
    [
        "retry-after: 7\r\ncontent-encoding: gzip\r\n",
        "RETRY-AFTER: 7\r\nContent-Encoding: GZIP\r\n",
        # Same lengths as the two read, other names: not taken for them.
        "Retry-Afterx: 7\r\nRetry-Aftr: 7\r\nContent-Encodinx: gzip\r\n",
    ],
    ids=["lower", "upper", "same-length-names"],
)
async def test_answer_headers_are_matched_by_name_whatever_the_case(
    headers: str, serve: Serve
) -> None:
    zipped = "gzip" in headers.lower() and "encodinx" not in headers.lower()

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        body = gzip.compress(b"{}") if zipped else b"{}"
        return ok(body, extra=headers)

    server = await serve(script)
    pool = pool_for(server)
    answer = await pool.round_trip("GET", get(), None)
    expected_retry = None if "Afterx" in headers else "7"
    assert (answer.status, answer.body, answer.retry_after) == (200, b"{}", expected_retry)
    await pool.close()


async def test_the_per_pod_posts_are_written_byte_for_byte(serve: Serve) -> None:
    """What RestClient writes for a Binding and an Event, whole: the header block in its
    order, one Content-Length, the protobuf body; what asched sent before its
    per-request CPU work (kproto's plans, the kept loop), so kube-apiserver sees the
    same requests."""

    async def script(_: Server, __: int, ___: bytes) -> Answer:
        return ok(b'{"kind":"Status","status":"Success","code":201}')

    server = await serve(script)
    host = f"127.0.0.1:{server.port}"
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.18a", "namespace": "ns"},
        "eventTime": "2026-12-05T01:02:03.123456Z",
        "reportingController": "asched",
        "reportingInstance": "asched-h",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p"},
        "note": "Successfully assigned ns/p to node-a",
        "type": "Normal",
    }
    async with RestClient(Connection.from_token(f"http://{host}", "t"), qps=0) as client:
        await client.bind("ns", "p", "uid-1", "node-a")
        await client.request("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", body=event)
    head = (
        "HTTP/1.1\r\nHost: {host}\r\nUser-Agent: asched/0.1.0\r\nAccept: application/json\r\n"
        "Accept-Encoding: gzip\r\nAuthorization: Bearer t\r\n"
        "Content-Type: application/vnd.kubernetes.protobuf\r\nContent-Length: {length}\r\n\r\n"
    )
    binding = bytes.fromhex(
        "6b3873000a0d0a027631120742696e64696e6712240a0e0a01701a026e732a057569642d3112120a"
        "044e6f64651a066e6f64652d612a027631"
    )
    scheduled = bytes.fromhex(
        "6b3873000a190a106576656e74732e6b38732e696f2f763112054576656e741280010a0b0a05702e"
        "3138611a026e73120b088bc5cdd806108094ef3a22066173636865642a086173636865642d683207"
        "42696e64696e673a095363686564756c656442100a03506f6412026e731a01702a02763152245375"
        "636365737366756c6c792061737369676e6564206e732f7020746f206e6f64652d615a064e6f726d"
        "616c"
    )
    assert [request for _, request in server.requests] == [
        f"POST /api/v1/namespaces/ns/pods/p/binding {head}".format(
            host=host, length=len(binding)
        ).encode()
        + binding,
        f"POST /apis/events.k8s.io/v1/namespaces/ns/events {head}".format(
            host=host, length=len(scheduled)
        ).encode()
        + scheduled,
    ]
