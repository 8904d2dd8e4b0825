"""A loopback HTTP proxy between asched and kube-apiserver that injects control-plane faults.

asched speaks plain HTTP/1.1 to the proxy (a kubeconfig with an http:// server and the
scheduler's bearer token); the proxy speaks TLS to the real API server, verifying it with
the cluster's CA. Because it sees each request, it can act on chosen ones, picked by verb
and a regular expression on the path:

- `reset`: the connection is reset (RST) before the request is forwarded: the server never
  saw it, the client sees "connection closed before the answer was complete".
- `lose_answer`: the request is forwarded and the server answers, but the connection is
  reset before the answer is passed on: the write happened, the client cannot know it.
- `status`: the proxy answers itself with that status and a meta/v1 Status body (with
  `details.retryAfterSeconds` and a Retry-After header when `retry_after` is set).
- `hold`: the request is forwarded `delay` seconds late, so it is in flight meanwhile.

Any fault may also `stall_watches` for that many seconds from the moment it acts: the
watches' bytes from the server are held back, then passed on, so a client's informers see
the fault's write only later (as when a kube-apiserver dies with a write and its watches).
`stalled` (a regular expression on the watch's path) holds back only those watches, so a
test can lag one informer and let another run. A `lose_answer` fault may also begin an
`outage` of that many seconds once the answer is lost (as when the server dies with it).

`outage()` cuts the watches and resets every request until it ends: the API server looks
unreachable. Every
request and the upstream status of each forwarded one are recorded (`log`), so a test can
count, say, the Binding POSTs that succeeded per pod. Watches are passed through untouched
once forwarded (the connection then pipes bytes both ways until either side closes).

Requests are read one at a time per connection (asched's clients never pipeline), with a
Content-Length body; answers are read by Content-Length or chunked encoding.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson

_HEAD_END = b"\r\n\r\n"
_MAX_HEAD = 64 * 1024


@dataclass
class Fault:
    """Act on the next `times` requests whose verb is `method` and whose path (without the
    query) matches `path` (re.search)."""

    method: str
    path: str
    action: str  # "reset", "lose_answer", "status" or "hold"
    times: int = 1
    status: int = 0
    retry_after: int | None = None
    delay: float = 0.0  # "hold": forwarded this many seconds late (reset if down by then)
    stall_watches: float = 0.0  # hold the watches' events back this long when acting
    stalled: str = ""  # which watches stall_watches holds back (re.search on the path)
    outage: float = 0.0  # "lose_answer": then look unreachable this long
    hits: int = 0

    def matches(self, method: str, path: str) -> bool:
        return self.hits < self.times and method == self.method and bool(re.search(self.path, path))


@dataclass(frozen=True, slots=True)
class Seen:
    method: str
    path: str
    # The upstream's status when forwarded (also for lose_answer); the proxy's own answer
    # for `status`; 0 for a reset.
    status: int
    fault: str = ""


@dataclass
class FaultProxy:
    """Listen on 127.0.0.1 (`port` once started) and forward to `upstream`."""

    upstream: str  # https://host:port
    ca_pem: bytes | None
    faults: list[Fault] = field(default_factory=list)
    log: list[Seen] = field(default_factory=list)
    port: int = 0
    _down: bool = False
    _server: asyncio.Server | None = None
    _connections: set[asyncio.Task[None]] = field(default_factory=set)
    # Each open watch's path, and its gate: set while its events flow, cleared while a
    # fault's stall_watches holds it back.
    _watches: dict[asyncio.StreamWriter, tuple[str, asyncio.Event]] = field(default_factory=dict)
    # The `stalled` patterns of the stalls in force.
    _stalling: list[str] = field(default_factory=list)

    def add(self, fault: Fault) -> Fault:
        self.faults.append(fault)
        return fault

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """Every request is reset while inside; the watches open are cut on entry."""
        self._go_down()
        try:
            yield
        finally:
            self._down = False

    def _go_down(self) -> None:
        self._down = True
        for writer in list(self._watches):
            _reset(writer)

    def _outage_for(self, seconds: float) -> None:
        """As `outage()`, for *seconds* from now."""
        self._go_down()
        asyncio.get_running_loop().call_later(seconds, setattr, self, "_down", False)

    def _stall_watches(self, seconds: float, pattern: str) -> None:
        """Hold back the events of the watches whose path matches *pattern* for *seconds*
        (overlapping stalls extend it), those opened meanwhile included."""
        self._stalling.append(pattern)
        self._gate_watches()

        def resume() -> None:
            self._stalling.remove(pattern)
            self._gate_watches()

        asyncio.get_running_loop().call_later(seconds, resume)

    def _stalled(self, path: str) -> bool:
        return any(re.search(pattern, path) for pattern in self._stalling)

    def _gate_watches(self) -> None:
        for path, gate in self._watches.values():
            if self._stalled(path):
                gate.clear()
            else:
                gate.set()

    @property
    def down(self) -> bool:
        return self._down

    def seen(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.log if s.method == method and re.search(path, s.path)]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[FaultProxy]:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._server.wait_closed()

    # ---- one client connection ---------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                method, target, raw = request
                path = target.split("?", 1)[0]
                fault = self._fault(method, path)
                if fault is not None and fault.stall_watches > 0:
                    self._stall_watches(fault.stall_watches, fault.stalled)
                if self._down or (fault is not None and fault.action == "reset"):
                    self.log.append(Seen(method, path, 0, "reset"))
                    _reset(writer)
                    return
                if fault is not None and fault.action == "status":
                    self.log.append(Seen(method, path, fault.status, "status"))
                    writer.write(_status_answer(fault.status, fault.retry_after))
                    await writer.drain()
                    continue
                if fault is not None and fault.action == "hold":
                    await asyncio.sleep(fault.delay)
                    if self.down:  # the outage may have begun meanwhile
                        self.log.append(Seen(method, path, 0, "reset"))
                        _reset(writer)
                        return
                    fault = None
                if upstream is None:
                    upstream = await self._connect()
                up_reader, up_writer = upstream
                up_writer.write(raw)
                await up_writer.drain()
                if _is_watch(target):
                    self.log.append(Seen(method, path, 0, "watch"))
                    gate = asyncio.Event()
                    self._watches[writer] = (path, gate)
                    self._gate_watches()
                    try:
                        await _pipe_both(reader, writer, up_reader, up_writer, gate)
                    finally:
                        del self._watches[writer]
                    return
                answer = await _read_answer(up_reader)
                status = int(answer.split(b" ", 2)[1])
                if fault is not None:  # lose_answer
                    self.log.append(Seen(method, path, status, "lose_answer"))
                    _reset(writer)
                    if fault.outage > 0:
                        self._outage_for(fault.outage)
                    return
                self.log.append(Seen(method, path, status))
                writer.write(answer)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return
        except asyncio.CancelledError:
            # Only running() cancels a connection, when the proxy stops. Python 3.11's
            # start_server calls task.exception() on a handler that ended cancelled and
            # logs the CancelledError as an unhandled error (fixed in 3.12), so the
            # handler ends normally instead.
            return
        finally:
            self._connections.discard(task)
            if upstream is not None:
                upstream[1].close()
            writer.close()

    def _fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.matches(method, path):
                fault.hits += 1
                return fault
        return None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        parts = urlsplit(self.upstream)
        context = ssl.create_default_context(
            cadata=None if self.ca_pem is None else self.ca_pem.decode("ascii")
        )
        return await asyncio.open_connection(
            parts.hostname, parts.port, ssl=context, limit=_MAX_HEAD * 16
        )


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    try:
        head = await reader.readuntil(_HEAD_END)
    except asyncio.IncompleteReadError:
        return None  # the client closed its idle connection
    method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
    length = _header(head, b"content-length")
    body = await reader.readexactly(int(length)) if length else b""
    return method, target, head + body


async def _read_answer(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(_HEAD_END)
    if (_header(head, b"transfer-encoding") or b"").lower() == b"chunked":
        chunks = [head]
        while True:
            size_line = await reader.readuntil(b"\r\n")
            chunks.append(size_line)
            size = int(size_line.split(b";", 1)[0], 16)
            if size == 0:
                chunks.append(await reader.readuntil(b"\r\n"))  # no trailers from the server
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size + 2))
    length = _header(head, b"content-length")
    return head + (await reader.readexactly(int(length)) if length else b"")


def _header(head: bytes, name: bytes) -> bytes | None:
    for line in head.split(b"\r\n")[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip().lower() == name:
            return value.strip()
    return None


def _is_watch(target: str) -> bool:
    return bool(re.search(r"[?&]watch=(true|1)(&|$)", target))


def _status_answer(status: int, retry_after: int | None) -> bytes:
    reasons = {409: "AlreadyExists", 429: "TooManyRequests", 500: "InternalError"}
    body: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f"injected by the fault proxy: {status}",
        "reason": reasons.get(status, "ServiceUnavailable"),
        "code": status,
    }
    extra = ""
    if retry_after is not None:
        body["details"] = {"retryAfterSeconds": retry_after}
        extra = f"Retry-After: {retry_after}\r\n"
    data = orjson.dumps(body)
    return (
        f"HTTP/1.1 {status} Injected\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n{extra}\r\n"
    ).encode() + data


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST rather than a FIN, as a killed server's kernel would."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _pipe_both(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
    flowing: asyncio.Event,
) -> None:
    """Pipe a watch both ways; the server's bytes wait while `flowing` is clear."""

    async def pipe(
        src: asyncio.StreamReader, dst: asyncio.StreamWriter, gate: asyncio.Event | None
    ) -> None:
        try:
            while chunk := await src.read(65536):
                if gate is not None:
                    await gate.wait()
                dst.write(chunk)
                await dst.drain()
        except OSError:
            pass

    tasks = [
        asyncio.ensure_future(pipe(reader, up_writer, None)),
        asyncio.ensure_future(pipe(up_reader, writer, flowing)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
