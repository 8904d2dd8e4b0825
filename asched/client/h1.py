"""A lean HTTP/1.1 keep-alive pool for the API server's request/response calls.

Why not aiohttp for these: asched makes two small writes per pod (a Binding and an Event)
and aiohttp spends most of its per-request CPU around the bytes, not on them (a
ClientRequest and a ClientResponse object, a multidict of headers, a yarl URL, payload
lookup, timer handles, tracing hooks). Profiled in the side-by-side benchmark it was
14 % of asched's CPU, more than the scheduling algorithm's Score. This pool writes a
request as one bytes object and reads the answer with httptools (llhttp, the C parser
Node.js uses), so a call costs a few tens of microseconds. Watches stay on aiohttp: they
are long-lived and their cost is decoding, not the HTTP layer.

What it guarantees:
- At most `limit` connections; a caller beyond that waits for one to come back.
- A connection is reused only after its previous answer was read completely and the
  server did not ask to close it; one that went idle longer than IDLE_SECONDS is closed
  rather than reused (kube-apiserver's own idle timeout is 90 s, set in its secure serving),
  and closed too, without waiting for a reuse, by the next request after that (the
  longest-idle are checked first). At most MAX_IDLE connections are kept idle, as
  client-go's transport keeps 25 per host (transport/cache.go idleConnsPerHost): a burst
  that opened up to `limit` (binds retried after a control-plane fault) does not leave
  them all open, each with its TLS state, for as long as a trickle of requests lasts.
- A request cancelled or timed out mid-flight closes its connection: nobody else may read
  the remains of its answer.
- `round_trip(..., timeout=T)` fails with TimeoutError once T seconds passed without an
  answer, counted from the call (the wait for a free connection included; connecting has
  its own `connect_timeout`). One sweep a second checks the deadlines of what is waiting,
  so it fires up to `sweep_every` late: a timer per request (asyncio.timeout) cost
  6-13 us on uvloop, a third of a whole request's client CPU.
- A reused connection that closes before a single byte of the answer arrived is retried
  once on a new connection when the request is safe to repeat (GET, as net/http's
  Transport.roundTrip does for replayable requests); other methods report the failure.
  HEAD is never sent (llhttp would wait for the body a HEAD answer announces but lacks).
- Failures without an answer raise H1Error (the caller turns it into TransportError).
- `Content-Encoding: gzip` answers (kube-apiserver compresses lists over 128 KiB when asked)
  are inflated.
- An answer carries its Retry-After header, the one header a caller acts on (the API
  client's retry of 429 and 5xx answers, asched.client.rest).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, cast
from urllib.parse import urlsplit

import httptools

from asched.client import tlssession

IDLE_SECONDS = 60.0
MAX_IDLE = 25
_T = TypeVar("_T")
_REPLAYABLE = frozenset({"GET", "OPTIONS"})


class H1Error(Exception):
    """The request got no complete answer (refused, reset, TLS, a malformed answer)."""


class ConnectionLost(H1Error):
    """The connection closed after the request was sent, before the answer was complete:
    what client-go's IsConnectionReset and IsProbableEOF recognise."""


class Answer(NamedTuple):
    """A complete answer: its status, its body (inflated), and its Retry-After header."""

    status: int
    body: bytes
    retry_after: str | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where the pool connects: host and port, and TLS when the scheme is https."""

    host: str
    port: int
    tls: ssl.SSLContext | None
    server_hostname: str | None
    host_header: str


def endpoint(url: str, tls: ssl.SSLContext | bool, server_hostname: str | None) -> Endpoint:
    """The Endpoint of an API server URL (scheme://host[:port]). *tls* is the connection's
    context, True for the system trust store, or False for no verification."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"server {url!r}: not an http(s)://host[:port] URL")
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    context = tlssession.context_for(tls) if secure else None
    # The Host header keeps the URL's spelling (brackets of an IPv6 literal included).
    return Endpoint(
        host=parts.hostname,
        port=port,
        tls=context,
        server_hostname=server_hostname or parts.hostname,
        host_header=parts.netloc.rpartition("@")[2],
    )


_CONTENT_ENCODING_LEN = len(b"content-encoding")
_RETRY_AFTER_LEN = len(b"retry-after")

# The most plaintext one SSLObject.read hands the parser at a time.
_TLS_READ = 64 * 1024


class _Connection(asyncio.Protocol):
    """One TCP connection carrying one request at a time, TLS done here in memory.

    With *tls* (a context and the server name) the connection speaks TLS through an
    ssl.SSLObject over two MemoryBIOs on a plain TCP transport, instead of the loop's TLS
    transport: uvloop's (and asyncio's) gives every connection a 256 KiB read buffer from
    the C heap, sized for streaming, and with up to 100 connections per client for
    Bindings and Events that was asched's largest growth in memory while scheduling
    (anti-affinity 1000/1000: 221 TLS connections, 57 MiB of heap, RSS from 77 to 112 MiB;
    docs/benchmarks.md, round twelve). An answer here is a few hundred bytes; the reads
    allocate what arrived. `ready` is done when the handshake is (at once without TLS)."""

    def __init__(self, tls: tuple[ssl.SSLContext, str | None] | None = None) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.served = 0
        self.idle_since = 0.0
        # The parser holds this connection's bound callbacks: a reference cycle, broken
        # in connection_lost (below).
        self._parser: httptools.HttpResponseParser | None = httptools.HttpResponseParser(self)
        self._answer: asyncio.Future[Answer] | None = None
        self._chunks: list[bytes] = []
        self._retry_after: str | None = None
        # Whether any byte of the current answer arrived (a retry must not follow one).
        self.received = False
        self._gzip = False
        self._keep_alive = True
        # Kept: asyncio.get_running_loop() makes a getpid() system call on every call
        # (Python 3.11 checks for a fork), and send() wants the loop once per request.
        self._loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[None] = self._loop.create_future()
        self.tls_object: ssl.SSLObject | None = None
        self._incoming = self._outgoing = None
        if tls is not None:
            context, server_hostname = tls
            self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            # Through the context's wrap_bio: a ResumingContext offers its session there.
            self.tls_object = context.wrap_bio(
                self._incoming, self._outgoing, server_hostname=server_hostname
            )
        self._handshaking = tls is not None

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        if self._handshaking:
            self._handshake()
        else:
            self.ready.set_result(None)

    def data_received(self, data: bytes) -> None:
        if self.tls_object is None:
            self._feed(data)
            return
        assert self._incoming is not None
        self._incoming.write(data)
        if self._handshaking:
            self._handshake()
            if self._handshaking:
                return
        obj, incoming = self.tls_object, self._incoming
        while True:
            try:
                plain = obj.read(_TLS_READ)
            except ssl.SSLWantReadError:  # the rest of a record is still on its way
                break
            except ssl.SSLZeroReturnError:  # the server's close_notify
                self.abort()
                return
            except ssl.SSLError as exc:
                self._fail(H1Error(f"TLS: {exc}"))
                self.abort()
                return
            if plain:
                self._feed(plain)
                if self.closed:
                    return
            # Usually one read takes all that arrived: stop without the exception a
            # read of nothing raises (a few microseconds per answer).
            if not incoming.pending and not obj.pending():
                break
        self._flush()  # a post-handshake message may want an answer

    def _feed(self, data: bytes) -> None:
        parser = self._parser
        if parser is None:  # closed: nothing more is read
            return
        self.received = True
        try:
            parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(H1Error(f"malformed answer: {exc}"))
            self.abort()

    def _handshake(self) -> None:
        assert self.tls_object is not None
        try:
            self.tls_object.do_handshake()
        except ssl.SSLWantReadError:
            self._flush()
            return
        except ssl.SSLError as exc:  # a refused certificate included
            self._handshaking = False
            if not self.ready.done():
                self.ready.set_exception(exc)
            self.abort()
            return
        self._handshaking = False
        self._flush()
        if not self.ready.done():
            self.ready.set_result(None)

    def _flush(self) -> None:
        out = self._outgoing
        if out is not None and out.pending and self.transport is not None and not self.closed:
            self.transport.write(out.read())

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        detail = f": {type(exc).__name__}: {exc}" if exc is not None else ""
        if not self.ready.done():
            lost = ConnectionResetError(f"closed during the TLS handshake{detail}")
            self.ready.set_exception(lost)
        self._fail(ConnectionLost(f"connection closed before the answer was complete{detail}"))
        # Break the parser's cycle, so reference counting frees a dead connection (its
        # TLS object and buffers: tens of KiB of OpenSSL's heap) as soon as the pool
        # lets go of it. Left to the collector, the dead connections of an API-server
        # restart were frozen alive by gctune.Sweeper and kept until a full collection:
        # about 5 MiB per restart at 200 nodes, a step in RSS at every fault of the soak.
        # The session ticket it received outlives it, in its context, for the next one.
        self._parser = None
        if self.tls_object is not None:
            tlssession.keep_ticket(self.tls_object)

    # -- httptools callbacks -------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        # Called for each of the seven-odd headers of every answer; only two names are
        # read, and their lengths rule out all of kube-apiserver's usual ones unlowered.
        size = len(name)
        if size == _CONTENT_ENCODING_LEN:
            if name.lower() == b"content-encoding" and value.strip().lower() == b"gzip":
                self._gzip = True
        elif size == _RETRY_AFTER_LEN and name.lower() == b"retry-after":
            self._retry_after = value.strip().decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        parser = self._parser
        assert parser is not None  # called from within _feed
        body = b"".join(self._chunks)
        self._chunks = []
        self._keep_alive = parser.should_keep_alive()
        status = parser.get_status_code()
        retry_after, self._retry_after = self._retry_after, None
        answer, self._answer = self._answer, None
        if self._gzip:
            self._gzip = False
            try:
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            except zlib.error as exc:
                if answer is not None and not answer.done():
                    answer.set_exception(H1Error(f"unreadable gzip answer: {exc}"))
                self.abort()
                return
        if answer is None or answer.done():
            # An answer nobody asked for: the connection is out of step; drop it.
            self.abort()
            return
        answer.set_result(Answer(status, body, retry_after))

    # -- use -----------------------------------------------------------------------------

    @property
    def reusable(self) -> bool:
        return self._keep_alive and not self.closed and self._answer is None

    def send(self, data: bytes) -> asyncio.Future[Answer]:
        assert self.transport is not None
        assert self._answer is None
        answer = self._answer = self._loop.create_future()
        if self.closed:
            # Lost between the connect and this request: nothing would ever answer.
            self._fail(ConnectionLost("connection closed before the request was sent"))
            return answer
        self.received = False
        self.served += 1
        if self.tls_object is None:
            self.transport.write(data)
        else:
            self.tls_object.write(data)
            self._flush()
        return answer

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _fail(self, exc: Exception) -> None:
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.set_exception(exc)


async def connect(endpoint: Endpoint) -> _Connection:
    """A new connection to *endpoint*, its TLS handshake done (no timeout of its own)."""
    tls = (endpoint.tls, endpoint.server_hostname) if endpoint.tls is not None else None
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(lambda: _Connection(tls), endpoint.host, endpoint.port)
    try:
        await conn.ready
    except BaseException:
        conn.abort()
        raise
    return conn


class H1Pool:
    """Keep-alive connections to one endpoint, at most *limit* at a time."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        limit: int,
        connect_timeout: float,
        now: Callable[[], float] = time.monotonic,
        sweep_every: float = 1.0,
        max_idle: int = MAX_IDLE,
    ) -> None:
        self._endpoint = endpoint
        self._limit = max(1, limit)
        self._max_idle = max(1, max_idle)
        self._connect_timeout = connect_timeout
        self._idle: list[_Connection] = []
        self._open = 0  # connected or connecting
        self._waiters: deque[asyncio.Future[_Connection | None]] = deque()
        self._closed = False
        # What a timed round trip waits on (an answer, or a turn for a connection), and
        # when it gives up; the sweep runs while there is any.
        self._now = now
        self._sweep_every = sweep_every
        self._deadlines: dict[asyncio.Future[Any], float] = {}
        self._sweep: asyncio.TimerHandle | None = None

    @property
    def host_header(self) -> str:
        return self._endpoint.host_header

    @property
    def open_connections(self) -> int:
        return self._open

    async def round_trip(
        self,
        method: str,
        head: bytes,
        body: bytes | None,
        *,
        # Not asyncio.timeout around the call: its timer per request is what this avoids.
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> Answer:
        """Send one request (*head* ends with the blank line) and return its Answer;
        TimeoutError when *timeout* seconds pass first."""
        data = head + body if body else head
        deadline = None if timeout is None else self._now() + timeout
        for attempt in (0, 1):
            conn = await self._acquire(fresh=attempt > 0, deadline=deadline)
            try:
                answer = await self._until(conn.send(data), deadline)
            except ConnectionLost as exc:
                self._free_slot()
                if attempt == 0 and conn.served > 1 and not conn.received and method in _REPLAYABLE:
                    continue
                raise ConnectionLost(str(exc)) from None
            except BaseException:
                # Cancelled or failed mid-flight: the rest of the answer may still come.
                conn.abort()
                self._free_slot()
                raise
            self._release(conn)
            return answer
        raise AssertionError("unreachable")

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.abort()
            self._open -= 1
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(H1Error("client closed"))
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None

    # -- deadlines -----------------------------------------------------------------------

    async def _until(self, future: asyncio.Future[_T], deadline: float | None) -> _T:
        """Await *future*, failed with TimeoutError by the sweep once *deadline* passes."""
        if deadline is None:
            return await future
        self._deadlines[future] = deadline
        if self._sweep is None:
            loop = asyncio.get_running_loop()
            self._sweep = loop.call_later(self._sweep_every, self.expire_overdue)
        try:
            return await future
        finally:
            self._deadlines.pop(future, None)

    def expire_overdue(self) -> None:
        """Fail what waits past its deadline (the sweep; tests call it directly)."""
        if self._sweep is not None:
            # Called outside the timer (a test): one chain of sweeps, never two.
            self._sweep.cancel()
            self._sweep = None
        now = self._now()
        for future, deadline in list(self._deadlines.items()):
            if future.done():
                del self._deadlines[future]
            elif deadline <= now:
                del self._deadlines[future]
                future.set_exception(TimeoutError("no answer before the request's timeout"))
        if self._deadlines and not self._closed:
            loop = asyncio.get_running_loop()
            self._sweep = loop.call_later(self._sweep_every, self.expire_overdue)

    # -- the pool ------------------------------------------------------------------------

    async def _acquire(self, *, fresh: bool, deadline: float | None = None) -> _Connection:
        if self._closed:
            raise H1Error("client closed")
        now = self._now()
        self._close_expired(now)
        while self._idle and not fresh:
            conn = self._idle.pop()
            if conn.reusable and now - conn.idle_since < IDLE_SECONDS:
                return conn
            conn.abort()
            self._open -= 1
        if self._open >= self._limit:
            if fresh and self._idle:
                # A retry must not reuse an idle connection; trade one for a new one.
                self._idle.pop(0).abort()
                self._open -= 1
            else:
                waiter: asyncio.Future[_Connection | None] = (
                    asyncio.get_running_loop().create_future()
                )
                self._waiters.append(waiter)
                try:
                    handed = await self._until(waiter, deadline)
                except BaseException:
                    if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                        # Handed a connection (or a slot) just as we were cancelled.
                        self._give_back(waiter.result())
                    else:
                        with contextlib.suppress(ValueError):
                            self._waiters.remove(waiter)
                    raise
                if handed is not None:
                    return handed
                # Handed a free slot: connect below (the slot was counted for us).
                return await self._connect(counted=True)
        return await self._connect(counted=False)

    async def _connect(self, *, counted: bool) -> _Connection:
        if not counted:
            self._open += 1
        endpoint = self._endpoint
        try:
            async with asyncio.timeout(self._connect_timeout):
                conn = await connect(endpoint)
        except BaseException as exc:
            self._open -= 1
            self._wake_one()
            if isinstance(exc, OSError | TimeoutError | ssl.SSLError):
                raise H1Error(
                    f"connect {endpoint.host}:{endpoint.port}: {type(exc).__name__}: {exc}"
                ) from exc
            raise
        return conn

    def _release(self, conn: _Connection) -> None:
        if not conn.reusable or self._closed:
            conn.abort()
            self._free_slot()
            return
        self._give_back(conn)

    def _give_back(self, conn: _Connection | None) -> None:
        """Hand *conn* (or, when None, a free slot) to the first waiter, else keep it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        if conn is None:
            self._open -= 1
        elif self._closed or len(self._idle) >= self._max_idle:
            conn.abort()
            self._open -= 1
        else:
            conn.idle_since = self._now()
            self._idle.append(conn)

    def _close_expired(self, now: float) -> None:
        """Close the idle connections unused for IDLE_SECONDS. Requests take the most
        recently returned (the list's end), so the longest-idle sit at its start, where
        nothing else would ever look at them."""
        idle = self._idle
        while idle and (now - idle[0].idle_since >= IDLE_SECONDS or not idle[0].reusable):
            idle.pop(0).abort()
            self._open -= 1

    def _free_slot(self) -> None:
        """A connection is gone: its slot goes to a waiter (who connects anew) or is freed."""
        self._give_back(None)

    def _wake_one(self) -> None:
        # A failed connect freed a slot; a waiter may try its own.
        if self._waiters and self._open < self._limit:
            self._open += 1
            self._give_back(None)
