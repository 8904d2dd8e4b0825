"""Client TLS contexts that resume sessions: after the first connection to the API server,
a new one skips the certificate exchange.

Why: asched talks HTTP/1.1, so it opens as many connections as it has requests in flight
(up to 100 per client; a side-by-side benchmark opened 200, one burst of binds and one of
Events), where client-go multiplexes one HTTP/2 connection. Each full TLS 1.3 handshake
costs the client a certificate-chain verification and kube-apiserver a signature. Measured
against kube-apiserver 1.37 on loopback, 200 connections opened one after another, each
carrying one GET: 1.01 ms of asched's CPU and 1.75 ms of kube-apiserver's per connection
with full handshakes, 0.74-0.84 ms and 0.60-0.90 ms resumed (Go's server resumed 199 of
200). Capping the connections instead cost throughput: 16 per client bound 408-480 pods/s
where 100 bound 558-631 (basic 1000 nodes / 5000 pods).

How: `SSLContext.wrap_bio` is where both event loops' TLS transports (asyncio's and
uvloop's) create a connection's TLS object, so it serves both of RestClient's pools
(asched.client.h1 for requests, aiohttp for watches) when they share one context
(`context_for`). ResumingContext keeps weak references to the last few TLS objects it
made; on each new client connection it takes the newest session ticket any of them has
received for that server name and offers it. A server that does not accept it (a
restarted API server with new ticket keys, an expired ticket) answers with a full
handshake, verified as always; no connection ever fails for resumption. Go's TLS server
accepts one ticket any number of times (it issues stateless tickets and no early data is
sent), which is what lets a burst of connections all resume from one ticket.
"""

from __future__ import annotations

import os
import ssl
import sys
import time
import weakref
from collections import deque
from dataclasses import dataclass

# How many of the newest TLS objects are watched for a ticket. A burst creates many before
# any has finished its handshake; the newest few finish soon after and one ticket is
# enough.
_WATCHED = 8
# How many times one watched object's session is read before it is given up. A TLS 1.3
# ticket arrives after the handshake, so the first read can come too early; each read
# costs memory for good (see `_ticket`), so it is bounded.
_READS = 2


@dataclass(slots=True)
class _Watched:
    ref: weakref.ref[ssl.SSLObject]
    offered: ssl.SSLSession | None  # the session wrap_bio offered it, to tell a refusal
    reads: int = 0


class ResumingContext(ssl.SSLContext):
    """An SSLContext whose client connections resume the newest session it received.

    A session is read from a connection only while the context holds none for that server
    name (none yet, expired, or refused by a restarted server), never once per connection:
    in CPython 3.11 every read of a TLS 1.3 connection's `session` leaks its copy of the
    session in OpenSSL's heap (about 5.6 KiB, peer certificate included; measured with
    glibc's mallinfo2 over 100 connections, none with the read left out). Reading one per
    connection grew asched's C heap by about 0.5 MiB at every API-server restart, the
    soak's steps (docs/benchmarks.md, "pymalloc against glibc")."""

    def __init__(self, protocol: int = ssl.PROTOCOL_TLS_CLIENT) -> None:
        # ssl.SSLContext sets itself up in __new__ (which received *protocol*).
        super().__init__()
        self._watched: deque[_Watched] = deque(maxlen=_WATCHED)
        self._sessions: dict[str | bytes | None, ssl.SSLSession] = {}

    def wrap_bio(
        self,
        incoming: ssl.MemoryBIO,
        outgoing: ssl.MemoryBIO,
        server_side: bool = False,
        server_hostname: str | bytes | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLObject:
        if server_side or session is not None:
            return super().wrap_bio(incoming, outgoing, server_side, server_hostname, session)
        offered = self.session_for(server_hostname)
        try:
            obj = super().wrap_bio(incoming, outgoing, False, server_hostname, offered)
        except ValueError:
            # A session OpenSSL will not take for this connection: connect without one.
            self._sessions.pop(server_hostname, None)
            offered = None
            obj = super().wrap_bio(incoming, outgoing, False, server_hostname, None)
        self._watched.append(_Watched(weakref.ref(obj), offered))
        return obj

    def keep(self, obj: ssl.SSLObject) -> None:
        """Keep *obj*'s ticket before *obj* goes away (a closed connection's), if the
        context has none for its server name: the weak references above cannot read a
        freed object."""
        name = obj.server_hostname
        held = self._sessions.get(name)
        if held is not None:
            if obj.version() is None or obj.session_reused or not self._offered(obj, held):
                return  # the held ticket works, or this connection cannot tell
            del self._sessions[name]  # refused: stale for every later connection
        session = _ticket(obj)
        if session is not None:
            self._sessions[name] = session

    def _offered(self, obj: ssl.SSLObject, session: ssl.SSLSession) -> bool:
        """Whether wrap_bio offered *session* to *obj* (as far as the watch remembers)."""
        return any(w.ref() is obj and w.offered is session for w in self._watched)

    def session_for(self, server_hostname: str | bytes | None) -> ssl.SSLSession | None:
        """The newest resumable session for *server_hostname*, if any connection got one."""
        for watched in list(self._watched):
            obj = watched.ref()
            if obj is None:
                self._watched.remove(watched)
                continue
            if obj.version() is None:
                continue  # mid-handshake: nothing to tell yet
            name = obj.server_hostname
            held = self._sessions.get(name)
            if held is not None and watched.offered is held and not obj.session_reused:
                # The server refused the held ticket (a restarted API server has new
                # ticket keys): it is stale for every later connection too.
                del self._sessions[name]
                held = None
            if held is not None:
                self._watched.remove(watched)  # a good ticket is held: nothing to read
                continue
            watched.reads += 1
            session = _ticket(obj)
            if session is not None:
                self._sessions[name] = session
            if session is not None or watched.reads >= _READS:
                self._watched.remove(watched)
        session = self._sessions.get(server_hostname)
        if session is not None and session.time + session.timeout < time.time():
            del self._sessions[server_hostname]
            return None
        return session


def keep_ticket(obj: ssl.SSLObject) -> None:
    """Before a connection's TLS object is dropped: its context keeps the ticket it
    received, when that context is a ResumingContext (see ResumingContext.keep)."""
    context = obj.context
    if isinstance(context, ResumingContext):
        context.keep(obj)


def _ticket(obj: ssl.SSLObject) -> ssl.SSLSession | None:
    """*obj*'s session once it can be resumed, else None (the object stays watched).
    Each call past the handshake reads `obj.session`, which leaks in CPython 3.11 (the
    class docstring): call it only when a ticket is needed."""
    # Mid-handshake, reading `session` raises ValueError (CPython copies a TLS 1.3
    # session through i2d, which fails on an unfinished one); version() is None until the
    # handshake is done. A TLS 1.3 ticket arrives after that: until then has_ticket is
    # false.
    if obj.version() is None:
        return None
    try:
        session = obj.session
    except ValueError:
        return None
    return session if session is not None and session.has_ticket else None


def client_context(
    *, cafile: str | None = None, cadata: str | None = None, verify: bool = True
) -> ResumingContext:
    """`ssl.create_default_context(cafile=..., cadata=...)` as a ResumingContext (the same
    settings, as Python 3.11's does them; tests compare the two), or one that verifies
    nothing when *verify* is false (insecure-skip-tls-verify)."""
    ctx = ResumingContext(ssl.PROTOCOL_TLS_CLIENT)
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif cafile or cadata:
        ctx.load_verify_locations(cafile=cafile, cadata=cadata)
    else:
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment:
        ctx.keylog_filename = keylog
    return ctx


def context_for(tls: ssl.SSLContext | bool) -> ssl.SSLContext:
    """The context a Connection's `tls` stands for: itself, or for True the system trust
    store, for False no verification."""
    if isinstance(tls, ssl.SSLContext):
        return tls
    return client_context(verify=tls)
