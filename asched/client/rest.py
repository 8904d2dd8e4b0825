"""RestClient: asched's production KubeClient.

Why not kubernetes_asyncio's generated client: each call costs ~800 us of CPU (its session
trusts the environment, which hops to a thread pool twice per request), its Watch turns
every event into model objects, and it cannot deserialize Binding responses (see
shared/perf.md). This client sends raw JSON paths with orjson bodies and returns
orjson-decoded bodies; typed decoding happens once, in the informers. With the
protobuf content type (clientConnection.contentType, protobuf by default as in
kube-scheduler) the per-pod writes asched makes of built-in kinds, Bindings and Events,
go as protobuf (asched.client.kproto); answers are still read as JSON.

Requests with an answer (every verb but watch) go over asched.client.h1's keep-alive
HTTP/1.1 pool, which costs about 75 us less CPU per request than aiohttp; watches, and
every request when a proxy is configured, use one aiohttp session.

What it guarantees:
- Keep-alive connections, at most `connections` for requests and as many for watches;
  the aiohttp session does not read proxy settings from the environment (`trust_env=False`).
- Every request except watches waits for the qps/burst token bucket, like client-go,
  which deliberately leaves the watch stream itself unthrottled.
- Non-2xx answers raise ApiError(status, reason, message) read from the Status body;
  failures without a usable answer (refused, reset, TLS, timeout, a 2xx body that is
  not JSON) raise TransportError. Both are RequestErrors classified by `kind`
  (asched.client.protocol.FailureKind); request() and bind() report each one they raise
  to the `failures` counter (asched_request_failures_total{verb,resource,kind}).
- Every request but a watch is retried as client-go's Request.request retries it
  (asched.client.retry): a 429 or 5xx with a Retry-After header, of any verb; a GET whose
  connection broke after it was sent. Each retry waits for the token bucket again. A
  wait that would end past the request's timeout is not started: the last failure is
  raised (or the last answer read) instead.
- A bearer token file is re-read at most once per `TOKEN_FILE_PERIOD` (client-go's cached
  file token source does the same), so rotated service-account tokens keep working.
- stream_lines has no total timeout (a watch lives for minutes); its read timeout is the
  watch's own timeoutSeconds plus a margin, so a dead connection is noticed.
"""

from __future__ import annotations

import contextlib
import errno
import re
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import quote, urlencode

import aiohttp
import anyio
import orjson
import structlog

from asched.base.clock import Clock, RealClock
from asched.client import h1, kproto, tlssession
from asched.client.connection import Connection
from asched.client.kubeconfig import load_connection
from asched.client.lines import LineSplitter
from asched.client.pager import DEFAULT_PAGE_SIZE, ListPage, list_pages
from asched.client.protocol import (
    FailureCounter,
    RequestError,
    TransportError,
    failure_kind,
    kind_of_status,
)
from asched.client.ratelimit import TokenBucket
from asched.client.retry import RetryPolicy
from asched.client.status import error_from_response

log = structlog.get_logger(__name__)

JSON = "application/json"
PATCH_CONTENT_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
}
PatchType = Literal["strategic", "merge", "json"]

# kube-scheduler's client defaults (componentconfig clientConnection.qps/burst).
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
TOKEN_FILE_PERIOD = 60.0
# A watch may stay silent until its timeoutSeconds; give the server this much longer.
WATCH_READ_MARGIN = 30.0
USER_AGENT = "asched/0.1.0"

_TRANSPORT_ERRORS = (aiohttp.ClientError, OSError, TimeoutError)
# A request target that needs no percent-encoding (names are DNS labels, paths ASCII);
# callers may put a query in the path ("...?limit=1").
_PLAIN_TARGET = re.compile(r"[A-Za-z0-9/._~:@!$&'()*+,;=%?-]*")
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class RestClient:
    """A KubeClient over one aiohttp session. Close it (`close()` or `async with`)."""

    def __init__(
        self,
        connection: Connection,
        *,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        clock: Clock | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        connections: int = 100,
        content_type: str = kproto.PROTOBUF,
        lean_http: bool = True,
        failures: FailureCounter | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.connection = connection
        self._retry = retry or RetryPolicy()
        # Every RequestError that request() and bind() raise is counted here by verb,
        # resource and kind, once, so no caller needs to count it again.
        self._failures = failures
        # client-go's ContentType: protobuf for the built-in kinds kproto can encode.
        self._protobuf = content_type == kproto.PROTOBUF
        self._clock = clock or RealClock()
        self._limiter = TokenBucket(qps, burst, self._clock)
        self._host = connection.host.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout)
        self._total_timeout = timeout
        # Requests with an answer go through asched.client.h1's pool unless a proxy is
        # configured (the pool speaks to the API server directly); watches use aiohttp.
        self._lean = lean_http and not connection.proxy
        self._pool: h1.H1Pool | None = None
        self._tls_context: ssl.SSLContext | None = None
        self._head_cache: dict[str | None, str] = {}
        self._connect_timeout = connect_timeout
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        self._extra: dict[str, Any] = {}
        if connection.tls_server_name:
            self._extra["server_hostname"] = connection.tls_server_name
        if connection.proxy:
            self._extra["proxy"] = connection.proxy
        self._authorization = connection.authorization
        # Monotonic time the token file is due to be read again; None without a file.
        self._token_due: float | None = None if connection.token_file is None else 0.0
        self._header_cache: dict[str | None, dict[str, str]] = {}

    @classmethod
    async def from_kubeconfig(
        cls, kubeconfig: str | Path | None = None, context: str | None = None, **kwargs: Any
    ) -> RestClient:
        """A client for `--kubeconfig` (None: in-cluster or the default kubeconfig)."""
        return cls(await load_connection(kubeconfig, context), **kwargs)

    @property
    def limiter(self) -> TokenBucket:
        return self._limiter

    @property
    def connections(self) -> int:
        """At most this many requests with an answer are in flight at once."""
        return self._connections

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    # -- plumbing ------------------------------------------------------------------------

    def _http(self) -> aiohttp.ClientSession:
        # Created on first use: an aiohttp session belongs to the running event loop.
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self._connections, ssl=self._tls(), keepalive_timeout=90.0
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                trust_env=False,
                headers={"Accept": JSON, "User-Agent": USER_AGENT},
            )
        return self._session

    def _tls(self) -> ssl.SSLContext:
        # One context for both pools: a session ticket a request's connection received
        # resumes the next watch's, and the other way round (asched.client.tlssession).
        if self._tls_context is None:
            self._tls_context = tlssession.context_for(self.connection.tls)
        return self._tls_context

    def _h1(self) -> h1.H1Pool:
        if self._pool is None:
            endpoint = h1.endpoint(self._host, self._tls(), self.connection.tls_server_name)
            self._pool = h1.H1Pool(
                endpoint, limit=self._connections, connect_timeout=self._connect_timeout
            )
        return self._pool

    def _head_lines(self, content_type: str | None) -> str:
        """The header block of an h1 request with this content type: the fixed headers
        aiohttp's session would add, then `_header_dict`'s (cached like it)."""
        lines = self._head_cache.get(content_type)
        if lines is None:
            lines = (
                f"Host: {self._h1().host_header}\r\nUser-Agent: {USER_AGENT}\r\n"
                f"Accept: {JSON}\r\nAccept-Encoding: gzip\r\n"
            ) + "".join(f"{k}: {v}\r\n" for k, v in self._header_dict(content_type).items())
            self._head_cache[content_type] = lines
        return lines

    async def _send_h1(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        data: bytes | None,
        content_type: str | None,
    ) -> h1.Answer:
        if _PLAIN_TARGET.fullmatch(path) is None:
            path = quote(path, safe="/:@!$&'()*+,;=-._~?%")
        if params:
            path = f"{path}{'&' if '?' in path else '?'}{urlencode(params)}"
        length = (
            f"Content-Length: {len(data)}\r\n"
            if data is not None
            else ("Content-Length: 0\r\n" if method in _WITH_BODY else "")
        )
        head = f"{method} {path} HTTP/1.1\r\n{self._head_lines(content_type)}{length}\r\n"
        try:
            return await self._h1().round_trip(
                method, head.encode(), data, timeout=self._total_timeout
            )
        except (h1.H1Error, TimeoutError) as exc:
            raise TransportError(
                f"{method} {path}: {type(exc).__name__}: {exc}",
                timeout=isinstance(exc, TimeoutError),
                broken=isinstance(exc, h1.ConnectionLost),
            ) from exc

    def _token_stale(self) -> bool:
        """Whether the token file is due to be read again (never without one)."""
        return self._token_due is not None and self._clock.now() >= self._token_due

    async def _refresh_token(self) -> None:
        if self._token_stale():
            await self._read_token_file()

    async def _headers(self, content_type: str | None) -> dict[str, str]:
        await self._refresh_token()
        return self._header_dict(content_type)

    def _header_dict(self, content_type: str | None) -> dict[str, str]:
        """Authorization and Content-Type (cached; emptied when the token changes)."""
        headers = self._header_cache.get(content_type)
        if headers is None:
            headers = {}
            if self._authorization:
                headers["Authorization"] = self._authorization
            if content_type is not None:
                headers["Content-Type"] = content_type
            self._header_cache[content_type] = headers
        return headers

    async def _read_token_file(self) -> None:
        path = self.connection.token_file
        assert path is not None
        # Set first, so concurrent requests keep using the current token meanwhile.
        self._token_due = self._clock.now() + TOKEN_FILE_PERIOD
        try:
            token = (await anyio.Path(path).read_text()).strip()
        except OSError as exc:
            # client-go keeps the last good token when a refresh fails.
            log.warning("token_file_unreadable", path=str(path), error=str(exc))
            return
        if not token:
            log.warning("token_file_empty", path=str(path))
            return
        authorization = f"Bearer {token}"
        if authorization != self._authorization:
            self._authorization = authorization
            self._header_cache.clear()
            self._head_cache.clear()

    async def _retrying(
        self, method: str, attempt: Callable[[], Awaitable[h1.Answer]]
    ) -> tuple[int, bytes]:
        """(status, body) of *attempt*, sent again as client-go retries a request
        (asched.client.retry; the rules are there)."""
        give_up = self._clock.now() + self._total_timeout
        retries = 0
        while True:
            try:
                status, body, retry_after = await attempt()
            except TransportError as exc:
                wait = self._retry.after_failure(method, exc, retries)
                if wait is None or self._clock.now() + wait > give_up:
                    raise
                reason = failure_kind(exc)
            else:
                wait = self._retry.after_answer(status, retry_after, retries)
                if wait is None or self._clock.now() + wait > give_up:
                    return status, body
                reason = kind_of_status(status)
            retries += 1
            # client-go logs each retry at V(4): routine, and counted by the caller's
            # failure once if the last attempt fails too.
            log.debug("request_retry", method=method, kind=reason, wait_s=wait)
            await self._clock.sleep(wait)

    async def _send(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        data: bytes | None,
        content_type: str | None,
    ) -> h1.Answer:
        """One attempt: wait for the token bucket, send, read the answer."""
        # The token bucket and the token file are asked without a coroutine each when
        # there is nothing to wait for (every request but a throttled one or a refresh).
        if not self._limiter.try_acquire():
            await self._limiter.acquire()
        if self._token_stale():
            await self._read_token_file()
        if self._lean:
            return await self._send_h1(method, path, params, data, content_type)
        headers = self._header_dict(content_type)
        try:
            async with self._http().request(
                method,
                self._host + path,
                params=params,
                data=data,
                headers=headers,
                **self._extra,
            ) as resp:
                body = await resp.read()
                return h1.Answer(resp.status, body, resp.headers.get("Retry-After"))
        except _TRANSPORT_ERRORS as exc:
            raise TransportError(
                f"{method} {path}: {type(exc).__name__}: {exc}",
                timeout=isinstance(exc, TimeoutError),
                broken=_broken(exc),
            ) from exc

    # -- KubeClient ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = JSON,
    ) -> Any:
        """Send *body* (orjson-encoded unless already bytes, protobuf-encoded when it is a
        built-in kind kproto knows and the client's content type is protobuf); return the
        decoded answer. A RequestError raised is counted first (see `failures`)."""
        try:
            return await self._request(method, path, body, params, content_type)
        except RequestError as exc:
            self._count(method, path, exc)
            raise

    def _count(self, method: str, path: str, exc: RequestError) -> None:
        if self._failures is not None:
            self._failures.request_failed(method, resource_of(path), exc.kind)

    async def _request(
        self,
        method: str,
        path: str,
        body: Any,
        params: Mapping[str, str] | None,
        content_type: str,
    ) -> Any:
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        else:
            data, content_type = self._encode_body(body, content_type)
        sent_type = content_type if data is not None else None
        status, raw = await self._retrying(
            method, lambda: self._send(method, path, params, data, sent_type)
        )
        if status >= 300:
            raise error_from_response(status, raw, method=method, path=path)
        try:
            return orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError as exc:
            # A 2xx that is not JSON comes from something between us and the API server.
            raise TransportError(f"{method} {path}: unreadable {status} answer: {exc}") from exc

    def _encode_body(self, body: Any, content_type: str) -> tuple[bytes, str]:
        """(bytes, content type) of a request body: protobuf when the client speaks it and
        kproto can encode the object, else orjson in the caller's content type."""
        if self._protobuf and content_type == JSON and isinstance(body, dict):
            encoded = kproto.encode(body)
            if encoded is not None:
                return encoded, kproto.PROTOBUF
        return orjson.dumps(body), content_type

    async def send_raw(
        self, method: str, path: str, params: Mapping[str, str] | None = None
    ) -> tuple[int, bytes]:
        """(status, body) of a body-less request, undecoded and not raising on non-2xx:
        for endpoints that answer plain text (/readyz, /livez)."""
        return await self._retrying(method, lambda: self._send(method, path, params, None, None))

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST a v1 Binding; the uid precondition makes a recreated namesake pod fail."""
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        data, content_type = self._encode_body(body, JSON)
        try:
            # The answer (a Status) carries nothing we use; it is read but not decoded.
            status, raw = await self._retrying(
                "POST", lambda: self._send("POST", path, None, data, content_type)
            )
            if status >= 300:
                raise error_from_response(status, raw, method="POST", path=path)
        except RequestError as exc:
            self._count("POST", path, exc)
            raise

    @contextlib.asynccontextmanager
    async def open_stream(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open a watch and yield, once the server has answered, an iterator of its
        newline-delimited JSON lines. Not rate limited.

        Entering returns only after the response headers arrived, so the watch is
        established: a caller may create objects next and still see their events.
        """
        read_timeout: float | None = None
        if params is not None and "timeoutSeconds" in params:
            read_timeout = float(params["timeoutSeconds"]) + WATCH_READ_MARGIN
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._connect_timeout, sock_read=read_timeout
        )
        headers = await self._headers(None)
        try:
            async with self._http().get(
                self._host + path,
                params=params,
                headers=headers,
                timeout=timeout,
                **self._extra,
            ) as resp:
                if resp.status >= 300:
                    raw = await resp.read()
                    raise error_from_response(resp.status, raw, method="WATCH", path=path)
                yield self._lines(path, resp)
        except _TRANSPORT_ERRORS as exc:
            raise TransportError(f"WATCH {path}: {type(exc).__name__}: {exc}") from exc

    async def _lines(self, path: str, resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
        splitter = LineSplitter()
        try:
            async for chunk in resp.content.iter_any():
                for line in splitter.feed(chunk):
                    yield line
        except _TRANSPORT_ERRORS as exc:
            raise TransportError(f"WATCH {path}: {type(exc).__name__}: {exc}") from exc
        if splitter.pending.strip():
            raise TransportError(f"WATCH {path}: stream ended inside an event")

    async def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        """A watch's newline-delimited JSON lines, as they arrive. Not rate limited."""
        async with self.open_stream(path, params) as lines:
            async for line in lines:
                yield line

    # -- helpers -------------------------------------------------------------------------

    async def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        return await self.request("GET", path, params=params)

    async def patch(
        self,
        path: str,
        body: Any,
        patch_type: PatchType = "strategic",
        *,
        params: Mapping[str, str] | None = None,
    ) -> Any:
        """PATCH with a strategic-merge, JSON-merge or JSON patch body."""
        return await self.request(
            "PATCH", path, body=body, params=params, content_type=PATCH_CONTENT_TYPES[patch_type]
        )

    def list_pages(
        self,
        path: str,
        params: Mapping[str, str] | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
    ) -> AsyncIterator[ListPage]:
        """Pages of a collection; see asched.client.pager for the continue-expiry rule."""
        return list_pages(self, path, params, limit=limit)


def _broken(exc: BaseException) -> bool:
    """Whether an aiohttp failure means the connection broke after the request was sent
    (client-go's IsConnectionReset and IsProbableEOF), not that it never opened."""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return True
    if isinstance(exc, aiohttp.ClientConnectorError):
        return False
    return isinstance(exc, ConnectionResetError | BrokenPipeError) or (
        isinstance(exc, aiohttp.ClientOSError) and exc.errno in (errno.ECONNRESET, errno.EPIPE)
    )


def resource_of(path: str) -> str:
    """The resource (and subresource) a request path names, for the failures metric:
    "/api/v1/namespaces/ns/pods/p/binding" -> "pods/binding",
    "/apis/events.k8s.io/v1/namespaces/ns/events" -> "events", "/api/v1/nodes/n" -> "nodes".
    Names and namespaces are left out, so the label's values stay few."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if parts[:1] == ["api"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"]:
        parts = parts[3:]
    else:
        return "other"
    if len(parts) >= 3 and parts[0] == "namespaces":
        parts = parts[2:]
    if not parts:
        return "other"
    return f"{parts[0]}/{parts[2]}" if len(parts) >= 3 else parts[0]
