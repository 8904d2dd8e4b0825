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

# How many of the newest TLS objects are watched for a ticket. A burst creates many before
# any has finished its handshake; the newest few finish soon after and one ticket is
# enough.
_WATCHED = 8


class ResumingContext(ssl.SSLContext):
    """An SSLContext whose client connections resume the newest session it received."""

    def __init__(self, protocol: int = ssl.PROTOCOL_TLS_CLIENT) -> None:
        # ssl.SSLContext sets itself up in __new__ (which received *protocol*).
        super().__init__()
        self._watched: deque[weakref.ref[ssl.SSLObject]] = deque(maxlen=_WATCHED)
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
            obj = super().wrap_bio(incoming, outgoing, False, server_hostname, None)
        self._watched.append(weakref.ref(obj))
        return obj

    def keep(self, obj: ssl.SSLObject) -> None:
        """Keep *obj*'s ticket, if it has one, before *obj* goes away (a closed
        connection's): the weak references above cannot read a freed object."""
        session = _ticket(obj)
        if session is not None:
            self._sessions[obj.server_hostname] = session

    def session_for(self, server_hostname: str | bytes | None) -> ssl.SSLSession | None:
        """The newest resumable session for *server_hostname*, if any connection got one."""
        for ref in list(self._watched):
            obj = ref()
            if obj is None:
                self._watched.remove(ref)
                continue
            session = _ticket(obj)
            if session is not None:
                self._watched.remove(ref)
                self._sessions[obj.server_hostname] = session
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
    """*obj*'s session once it can be resumed, else None (the object stays watched)."""
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
