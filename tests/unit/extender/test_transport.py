"""The HTTP transport against a loopback server: answers, kube-scheduler's error words,
the httpTimeout deadline, and the TLS settings of makeTransport."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable

import pytest

from asched.config import ExtenderConfig, ExtenderTLS
from asched.extender import ExtenderError, ExtenderSetupError, Transport
from asched.extender.transport import tls_context
from asched.server.certgen import generate_self_signed
from asched.server.tls import CertKeyPair, build_context
from tests.certs import ClientCA

Handler = Callable[[bytes], bytes | None]  # request bytes -> raw response (None: never answer)
Server = Callable[..., asyncio.Future[int]]


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    servers: list[asyncio.Server] = []
    writers: list[asyncio.StreamWriter] = []
    requests: list[bytes] = []
    done = asyncio.Event()

    async def start(handler: Handler, tls: ssl.SSLContext | None = None) -> int:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writers.append(writer)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            body = await reader.readexactly(length)
            requests.append(head + body)
            answer = handler(head + body)
            if answer is None:
                await done.wait()
            writer.write(answer or b"")
            await writer.drain()
            writer.close()

        srv = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=tls)
        servers.append(srv)
        return int(srv.sockets[0].getsockname()[1])

    yield start  # type: ignore[misc]
    done.set()
    for writer in writers:
        writer.close()
    for srv in servers:
        srv.close()
        await srv.wait_closed()


def _ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


async def test_posts_json_to_prefix_and_verb(
    server: Server,
) -> None:
    seen: list[bytes] = []

    def handler(request: bytes) -> bytes:
        seen.append(request)
        return _ok(b'{"Error":""}')

    port = await server(handler)
    t = Transport(ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}/scheduler/"))
    try:
        assert await t.post("bind", b'{"x":1}') == b'{"Error":""}'
    finally:
        await t.close()
    head, _, body = seen[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /scheduler/bind HTTP/1.1\r\n")
    assert b"Content-Type: application/json" in head
    assert body == b'{"x":1}'


async def test_non_200_is_kube_schedulers_message(
    server: Server,
) -> None:
    port = await server(lambda r: b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")
    t = Transport(ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}"))
    try:
        with pytest.raises(ExtenderError) as info:
            await t.post("filter", b"{}")
    finally:
        await t.close()
    assert str(info.value) == (
        f"failed filter with extender at URL http://127.0.0.1:{port}/filter, code 500"
    )


async def test_refused_connection_is_worded_as_go_does() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    t = Transport(ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}"))
    with pytest.raises(ExtenderError) as info:
        await t.post("filter", b"{}")
    assert str(info.value) == (
        f'Post "http://127.0.0.1:{port}/filter": dial tcp 127.0.0.1:{port}: connect: '
        "connection refused"
    )


async def test_http_timeout_is_the_calls_deadline(
    server: Server,
) -> None:
    port = await server(lambda r: None)  # never answers
    clock = [0.0]
    t = Transport(
        ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}", http_timeout=0.05),
        now=lambda: clock[0],
    )
    call = asyncio.ensure_future(t.post("filter", b"{}"))
    await asyncio.sleep(0)
    clock[0] = 0.06  # the deadline passed; the pool's next sweep fails the call
    with pytest.raises(ExtenderError) as info:
        await asyncio.wait_for(call, 5)
    await t.close()
    assert str(info.value) == (
        f'Post "http://127.0.0.1:{port}/filter": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)"
    )


def test_tls_nothing_configured_uses_the_system_trust_store() -> None:
    assert tls_context(ExtenderConfig(url_prefix="https://x")) is True


def test_tls_enable_https_without_a_ca_does_not_verify() -> None:
    ctx = tls_context(ExtenderConfig(url_prefix="https://x", enable_https=True))
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.verify_mode == ssl.CERT_NONE
    assert not ctx.check_hostname


def test_tls_insecure_with_a_ca_is_refused() -> None:
    config = ExtenderConfig(
        url_prefix="https://x", tls=ExtenderTLS(insecure=True, ca_file="/ca.pem")
    )
    with pytest.raises(ExtenderSetupError) as info:
        tls_context(config)
    assert str(info.value) == (
        "couldn't build extenders: specifying a root certificates file with the insecure "
        "flag is not allowed"
    )


def test_tls_unreadable_ca_is_a_startup_error(tmp_path: object) -> None:
    config = ExtenderConfig(url_prefix="https://x", tls=ExtenderTLS(ca_data=b"not a pem"))
    with pytest.raises(ExtenderSetupError, match="couldn't build extenders: "):
        tls_context(config)


@pytest.fixture(scope="module")
def serving() -> CertKeyPair:
    """A serving pair for localhost and 127.0.0.1; its CA is the last certificate."""
    return generate_self_signed()


def _ca_of(pair: CertKeyPair) -> bytes:
    marker = b"-----BEGIN CERTIFICATE-----"
    return marker + pair.cert_pem.split(marker)[-1]


async def _post_over_tls(
    server: Server, tls: ssl.SSLContext, config: ExtenderTLS | None, *, enable_https: bool = False
) -> bytes:
    port = await server(lambda r: _ok(b"{}"), tls)
    t = Transport(
        ExtenderConfig(
            url_prefix=f"https://127.0.0.1:{port}", enable_https=enable_https, tls=config
        )
    )
    try:
        return await t.post("filter", b"{}")
    finally:
        await t.close()


async def test_https_verified_with_the_configured_ca_and_server_name(
    server: Server, serving: CertKeyPair
) -> None:
    config = ExtenderTLS(ca_data=_ca_of(serving), server_name="localhost")
    assert await _post_over_tls(server, build_context(serving), config) == b"{}"


async def test_https_with_an_unknown_ca_fails(server: Server, serving: CertKeyPair) -> None:
    with pytest.raises(ExtenderError, match="certificate verify failed"):
        await _post_over_tls(server, build_context(serving), None)


async def test_enable_https_without_a_ca_does_not_verify(
    server: Server, serving: CertKeyPair
) -> None:
    assert await _post_over_tls(server, build_context(serving), None, enable_https=True) == b"{}"


async def test_client_certificate_from_pem_data(server: Server, serving: CertKeyPair) -> None:
    ca = ClientCA()
    issued = ca.issue("scheduler")
    tls = build_context(serving, client_ca=ca.pem)
    tls.verify_mode = ssl.CERT_REQUIRED  # the extender insists on a client certificate
    config = ExtenderTLS(
        ca_data=_ca_of(serving), cert_data=issued.cert_pem, key_data=issued.key_pem
    )
    assert await _post_over_tls(server, tls, config) == b"{}"
    with pytest.raises(ExtenderError):
        await _post_over_tls(server, tls, ExtenderTLS(ca_data=_ca_of(serving)))
