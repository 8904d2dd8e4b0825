"""The operational HTTP endpoints kube-scheduler serves: health, readiness and metrics.

Kubernetes probes and Prometheus expect /healthz, /livez, /readyz and /metrics on the
scheduler's port (10259 for kube-scheduler), so manifests and scrape configs written for
kube-scheduler work for asched. The server runs on the scheduler's own event loop: if
/healthz answers, the loop is running - which is what liveness must show.

Guarantees: one aiohttp AppRunner per server, started and stopped by `async with` (or
owned for its whole life by `run()` in the scheduler's task group); no access log lines per
probe or scrape; the bound port is readable after start (tests bind port 0).

Readiness and liveness are callbacks returning (ok, reason) so the server knows nothing of
the scheduler: readiness is true once the caches synced and while leading or standing by;
liveness can add the leader-election watchdog (kube-scheduler's /healthz includes it).

Serving is HTTPS with a ServingCertificate (asched.server.tls) whose files are re-read
while the server runs, and every request, routed or not, passes one Gate
(asched.server.gate: delegated authentication and authorization) before its handler; plain
HTTP with an open gate is for `--insecure-serving` on loopback only (asched.server.options).
Routes given as `routes` (the inspector's, later) sit behind the same gate.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import NoReturn, Self

import anyio
import structlog
from aiohttp import web

from asched.base.errors import StartupError
from asched.metrics import CONTENT_TYPE, Metrics
from asched.server.authn import user_from_client_certificate
from asched.server.gate import Gate, OpenGate
from asched.server.tls import ServingCertificate

log = structlog.get_logger(__name__)

Check = Callable[[], tuple[bool, str]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# All interfaces: kubelet probes and Prometheus scrapes come from outside the pod.
DEFAULT_HOST = "0.0.0.0"
DEFAULT_PORT = 10259


def _always_ok() -> tuple[bool, str]:
    return True, ""


class OpsServerError(StartupError):
    """The ops endpoints cannot listen where they were told to."""


class OpsServer:
    """Serves /healthz, /livez, /readyz and /metrics on `host:port`."""

    def __init__(
        self,
        metrics: Metrics,
        *,
        readiness: Check = _always_ok,
        liveness: Check = _always_ok,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        certificate: ServingCertificate | None = None,
        gate: Gate | None = None,
        routes: Sequence[web.AbstractRouteDef] = (),
    ) -> None:
        """Without *certificate* the server speaks plain HTTP; without *gate* it serves
        everyone. Only `--insecure-serving` (loopback) leaves both out."""
        self._metrics = metrics
        self._certificate = certificate
        self._gate: Gate = gate if gate is not None else OpenGate()
        self._routes = tuple(routes)
        self._readiness = readiness
        self._liveness = liveness
        self._host = host
        self._requested_port = port
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The bound port (differs from the requested one when that was 0)."""
        if self._port is None:
            raise RuntimeError("OpsServer is not started")
        return self._port

    @property
    def url(self) -> str:
        scheme = "http" if self._certificate is None else "https"
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"{scheme}://{host}:{self.port}"

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/healthz", self._health)
        app.router.add_get("/livez", self._health)
        app.router.add_get("/readyz", self._ready)
        app.router.add_get("/metrics", self._render_metrics)
        app.router.add_routes(self._routes)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        # Before routing's answer too: an unknown path gets 401/403, not a 404 that tells
        # strangers which paths exist (the apiserver's filters also run before its mux).
        peercert = None
        if self._certificate is not None and request.transport is not None:
            # Present only when the client sent a certificate that chains to the CA.
            peercert = request.transport.get_extra_info("peercert")
        refusal = await self._gate.admit(
            request.method,
            request.path,
            request.headers.get("Authorization"),
            user_from_client_certificate(peercert),
        )
        if refusal is not None:
            return web.Response(
                status=refusal.status,
                body=refusal.body,
                headers={"Content-Type": refusal.content_type, "X-Content-Type-Options": "nosniff"},
            )
        return await handler(request)

    async def __aenter__(self) -> Self:
        if self._runner is not None:
            raise RuntimeError("OpsServer already started")
        # access_log=None: one log line per probe and scrape would drown the scheduler's logs.
        runner = web.AppRunner(self._app(), access_log=None)
        await runner.setup()
        ssl_context = None if self._certificate is None else self._certificate.server_context
        try:
            site = web.TCPSite(runner, self._host, self._requested_port, ssl_context=ssl_context)
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            # A port in use or an address not on this host: the user's to fix, one line.
            where = f"{self._host}:{self._requested_port}"
            # The event loop's strerror wraps the OS's words; errno gives them plain.
            why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            raise OpsServerError(f"cannot serve /healthz and /metrics on {where}: {why}") from exc
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = _bound_port(runner)
        log.info(
            "ops_server_started",
            host=self._host,
            port=self._port,
            https=self._certificate is not None,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        runner, self._runner = self._runner, None
        self._port = None
        if runner is not None:
            # Shielded: a cancelled scheduler must still close its listening socket.
            with anyio.CancelScope(shield=True):
                await runner.cleanup()
            log.info("ops_server_stopped")

    async def run(self) -> NoReturn:
        """Serve, and re-read the certificate files, until cancelled (for a task group)."""
        async with self:
            await self.watch_certificate()
        raise AssertionError("unreachable")  # watching only ends by cancellation

    async def watch_certificate(self) -> NoReturn:
        """Re-read the serving certificate's files (if any) until cancelled. The owner runs
        it in its task group while the server is entered: a task group of the server's own,
        opened in __aenter__, could not be closed from another task."""
        if self._certificate is not None:
            await self._certificate.watch()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # sleep_forever only ends by cancellation

    # ---- handlers -----------------------------------------------------------------------

    async def _health(self, _request: web.Request) -> web.Response:
        return _check_response(self._liveness)

    async def _ready(self, _request: web.Request) -> web.Response:
        return _check_response(self._readiness)

    async def _render_metrics(self, _request: web.Request) -> web.Response:
        return web.Response(body=self._metrics.render(), headers={"Content-Type": CONTENT_TYPE})


def _check_response(check: Check) -> web.Response:
    ok, reason = check()
    if ok:
        return web.Response(text="ok")
    return web.Response(status=500, text=reason or "not ok")


def _bound_port(runner: web.AppRunner) -> int:
    for address in runner.addresses:
        # TCP sockets report (host, port) for IPv4 and (host, port, flow, scope) for IPv6.
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    raise RuntimeError(f"no TCP address bound: {runner.addresses!r}")
