"""POST one JSON body to an extender and return its answer: HTTPExtender.send's transport.

Built on asched's own HTTP/1.1 pool (asched.client.h1): keep-alive connections, one
request per connection at a time, and a deadline per call counted from the call. The
deadline is the extender's httpTimeout, as Go's http.Client.Timeout: the call fails
once it passes, whatever it was waiting for (a free connection, connecting, the answer).
The pool checks deadlines on a sweep; the sweep here runs ten times per timeout, so a
timed-out call ends at most a tenth of the timeout late.

Failures are worded as kube-scheduler's net/http client words them, since they end up
in FailedScheduling events: `Post "<url>": <cause>` for a call without an answer, and
`failed <verb> with extender at URL <url>, code <status>` for an answer other than 200.
TLS follows makeTransport: `tlsConfig` gives the CA, client certificate, server name and
insecure flag; `enableHTTPS` without a CA turns verification off. The URL's scheme, not
enableHTTPS, decides whether TLS is spoken at all, as with Go's transport.
"""

from __future__ import annotations

import ssl
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from asched.base.errors import StartupError
from asched.client import h1
from asched.client.tlssession import client_context
from asched.config.model import ExtenderConfig, ExtenderTLS
from asched.framework.extenders import ExtenderError

# Connections per extender; Go's transport has no cap, a scheduler sends one call at a
# time per extender outside of binding, so a handful is plenty.
MAX_CONNECTIONS = 16
USER_AGENT = "asched"


class ExtenderSetupError(StartupError):
    """An extender's config cannot be turned into a client (kube-scheduler:
    "couldn't build extenders: ...")."""


class Poster(Protocol):
    """How an HTTPExtender reaches its extender (tests give it a fake)."""

    async def post(self, verb: str, body: bytes) -> bytes:
        """The 200 answer's body to a POST of *body* to `<urlPrefix>/<verb>`; raises
        ExtenderError when there is none."""
        ...

    async def close(self) -> None: ...


class Transport:
    """HTTP POSTs to one extender's `<urlPrefix>/<verb>`."""

    def __init__(
        self, config: ExtenderConfig, *, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.url_prefix = config.url_prefix.rstrip("/")
        parts = urlsplit(self.url_prefix)
        self._path = parts.path
        self._timeout = config.http_timeout
        tls = tls_context(config)
        server_name = config.tls.server_name if config.tls is not None else ""
        try:
            endpoint = h1.endpoint(self.url_prefix, tls, server_name or None)
        except ValueError as exc:
            raise ExtenderSetupError(f"couldn't build extenders: {exc}") from None
        self._endpoint = endpoint
        self._pool = h1.H1Pool(
            endpoint,
            limit=MAX_CONNECTIONS,
            connect_timeout=self._timeout,
            now=now,
            sweep_every=min(1.0, self._timeout / 10),
        )

    async def post(self, verb: str, body: bytes) -> bytes:
        """The answer's body; ExtenderError when there is none, or it is not a 200."""
        url = f"{self.url_prefix}/{verb}"
        head = (
            f"POST {self._path}/{verb} HTTP/1.1\r\nHost: {self._endpoint.host_header}\r\n"
            f"User-Agent: {USER_AGENT}\r\nContent-Type: application/json\r\n"
            f"Accept-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        try:
            status, answer, _ = await self._pool.round_trip(
                "POST", head, body, timeout=self._timeout
            )
        except TimeoutError:
            raise ExtenderError(
                f'Post "{url}": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)"
            ) from None
        except h1.H1Error as exc:
            raise ExtenderError(f'Post "{url}": {self._cause(exc)}') from None
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {status}")
        return answer

    def _cause(self, exc: h1.H1Error) -> str:
        """net/http's words for the common failures, else the pool's."""
        cause = exc.__cause__
        address = f"{self._endpoint.host}:{self._endpoint.port}"
        if isinstance(cause, ConnectionRefusedError):
            return f"dial tcp {address}: connect: connection refused"
        if isinstance(cause, TimeoutError):
            return f"dial tcp {address}: i/o timeout"
        if "closed" in str(exc).lower() or "lost" in str(exc).lower():
            return "EOF"
        return str(exc)

    async def close(self) -> None:
        await self._pool.close()


def tls_context(config: ExtenderConfig) -> ssl.SSLContext | bool:
    """makeTransport + restclient.TLSConfigFor: True (the system trust store) when nothing
    is configured, else a context with what tlsConfig and enableHTTPS ask for."""
    tls = config.tls or ExtenderTLS()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (config.enable_https and not has_ca)
    has_cert = bool(tls.cert_file or tls.cert_data or tls.key_file or tls.key_data)
    if not (has_ca or has_cert or insecure or tls.server_name):
        return True
    if insecure and has_ca:
        raise ExtenderSetupError(
            "couldn't build extenders: specifying a root certificates file with the "
            "insecure flag is not allowed"
        )
    try:
        ctx = client_context(
            cafile=None if tls.ca_data else (tls.ca_file or None),
            cadata=tls.ca_data.decode("ascii") if tls.ca_data else None,
            verify=not insecure,
        )
        if has_cert:
            _load_client_certificate(ctx, tls)
    except (ssl.SSLError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExtenderSetupError(f"couldn't build extenders: {exc}") from exc
    return ctx


def _load_client_certificate(ctx: ssl.SSLContext, tls: ExtenderTLS) -> None:
    """certData/keyData win over certFile/keyFile (ssl loads PEM only from files, so the
    data goes through a private temporary directory, removed at once)."""
    if not (tls.cert_data or tls.key_data):
        ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cert = Path(tls.cert_file) if not tls.cert_data else Path(tmp, "cert.pem")
        key = Path(tls.key_file) if not tls.key_data else Path(tmp, "key.pem")
        if tls.cert_data:
            cert.write_bytes(tls.cert_data)
        if tls.key_data:
            key.write_bytes(tls.key_data)
        ctx.load_cert_chain(cert, key)
