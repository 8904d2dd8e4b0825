"""asched.client.tlssession against a loopback TLS 1.3 server (Python's, which issues
session tickets as Go's does): the second connection resumes, a ticket is never offered
to another server name, a refused ticket costs a full handshake and not the connection,
and the context verifies exactly as ssl.create_default_context's does."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from asched.client import h1, tlssession
from asched.server.certgen import generate_self_signed
from asched.server.tls import CertKeyPair, build_context


@pytest.fixture(scope="module")
def pair() -> CertKeyPair:
    return generate_self_signed("localhost", ips=("127.0.0.1",))


Start = Callable[[ssl.SSLContext], Awaitable[int]]


@pytest.fixture
async def serve(pair: CertKeyPair) -> AsyncIterator[Start]:
    servers: list[asyncio.Server] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def start(server_ctx: ssl.SSLContext) -> int:
        srv = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
        servers.append(srv)
        port: int = srv.sockets[0].getsockname()[1]
        return port

    yield start
    for srv in servers:
        srv.close()


async def _get(ctx: ssl.SSLContext, port: int, server_hostname: str = "localhost") -> bool:
    """One request on a new connection of the h1 pool's kind (TLS in memory, through the
    context's wrap_bio); whether its TLS session was resumed."""
    endpoint = h1.Endpoint("127.0.0.1", port, ctx, server_hostname, "t")
    conn = await h1.connect(endpoint)
    try:
        status, body, _ = await conn.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (status, body) == (200, b"ok")
        assert conn.tls_object is not None
        return conn.tls_object.session_reused
    finally:
        conn.abort()


def _client(pair: CertKeyPair) -> tlssession.ResumingContext:
    return tlssession.client_context(cadata=pair.cert_pem.decode())


async def test_the_second_connection_resumes_the_first_ones_session(
    serve: Start, pair: CertKeyPair
) -> None:
    port = await serve(build_context(pair))
    ctx = _client(pair)
    assert [await _get(ctx, port) for _ in range(4)] == [False, True, True, True]


async def test_a_burst_opened_before_any_ticket_resumes_once_one_arrives(
    serve: Start, pair: CertKeyPair
) -> None:
    port = await serve(build_context(pair))
    ctx = _client(pair)
    # More connections than the context watches, all started together: most (usually
    # all) get their TLS object before any ticket exists.
    await asyncio.gather(*(_get(ctx, port) for _ in range(12)))
    assert await _get(ctx, port)


async def test_a_session_is_offered_only_to_the_server_name_it_came_from(
    serve: Start, pair: CertKeyPair
) -> None:
    port = await serve(build_context(pair))
    ctx = _client(pair)
    assert not await _get(ctx, port, "localhost")
    assert not await _get(ctx, port, "127.0.0.1")
    assert await _get(ctx, port, "localhost")
    assert await _get(ctx, port, "127.0.0.1")


async def test_a_refused_ticket_falls_back_to_a_full_verified_handshake(
    serve: Start, pair: CertKeyPair
) -> None:
    ctx = _client(pair)
    first = await serve(build_context(pair))
    assert not await _get(ctx, first)
    # Another server (its own ticket keys, as a restarted API server has) with the same
    # certificate: the ticket from the first is offered, refused, and the handshake is
    # a full one.
    second = await serve(build_context(pair))
    assert not await _get(ctx, second)
    assert await _get(ctx, second)
    # A server whose certificate the context does not trust is still refused.
    other = await serve(build_context(generate_self_signed("localhost")))
    with pytest.raises(ssl.SSLCertVerificationError):
        await _get(ctx, other)


def test_a_connection_mid_handshake_is_watched_not_read() -> None:
    # Reading a TLS object's session mid-handshake raises in CPython; a burst of new
    # connections asks for a session while others are in exactly that state.
    ctx = tlssession.client_context(verify=False)
    obj = ctx.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="x")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()  # the ClientHello is written; the answer never comes
    assert ctx.session_for("x") is None
    second = ctx.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="x")
    assert second.session is None


def test_client_context_matches_the_standard_library_default() -> None:
    pem = generate_self_signed("localhost").cert_pem.decode()
    ours, std = tlssession.client_context(cadata=pem), ssl.create_default_context(cadata=pem)
    for attr in ("protocol", "verify_mode", "check_hostname", "options", "verify_flags"):
        assert getattr(ours, attr) == getattr(std, attr), attr
    assert (ours.minimum_version, ours.maximum_version) == (
        std.minimum_version,
        std.maximum_version,
    )
    assert ours.get_ca_certs() == std.get_ca_certs()


def test_an_insecure_context_verifies_nothing_and_endpoints_share_it() -> None:
    insecure = tlssession.context_for(False)
    assert isinstance(insecure, tlssession.ResumingContext)
    assert (insecure.verify_mode, insecure.check_hostname) == (ssl.CERT_NONE, False)
    system = tlssession.context_for(True)
    assert (system.verify_mode, system.check_hostname) == (ssl.CERT_REQUIRED, True)
    # A ready context is used as it is: RestClient hands one to both of its pools.
    assert h1.endpoint("https://127.0.0.1:6443", system, None).tls is system


async def test_a_session_is_read_only_while_the_context_needs_a_ticket(
    serve: Start, pair: CertKeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CPython 3.11 leaks every read of a TLS 1.3 connection's `session` (about 5.6 KiB of
    # OpenSSL's heap; tlssession's docstring): once a ticket is held, connections must
    # resume without reading theirs. Reading one per connection was the soak's step of
    # C heap at every API-server restart.
    reads = 0
    plain = vars(ssl.SSLObject)["session"]
    assert isinstance(plain, property)

    def counted(obj: ssl.SSLObject) -> ssl.SSLSession | None:
        nonlocal reads
        reads += 1
        assert plain.fget is not None
        session: ssl.SSLSession | None = plain.fget(obj)
        return session

    monkeypatch.setattr(ssl.SSLObject, "session", property(counted, plain.fset))
    ctx = _client(pair)
    first = await serve(build_context(pair))
    assert [await _get(ctx, first) for _ in range(20)] == [False] + [True] * 19
    await asyncio.gather(*(_get(ctx, first) for _ in range(12)))
    assert reads <= 2
    # A restarted server refuses the held ticket: the context reads again until it holds
    # the new server's, then stops.
    before = reads
    second = await serve(build_context(pair))
    resumed = [await _get(ctx, second) for _ in range(20)]
    assert resumed == [False] + [True] * 19
    assert reads - before <= 2
