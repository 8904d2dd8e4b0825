"""The inspector's HTTP routes, mounted on the ops server behind its Gate.

- /inspector/            the page (static files shipped in the package, no CDN);
- /inspector/static/...  its script and style sheet;
- /inspector/api/snapshot  one snapshot as JSON;
- /inspector/api/events    server-sent events: a snapshot per tick, coalesced per client
  (asched.inspector.stream), so a slow browser skips snapshots instead of queueing them;
- /inspector/api/explain?pod=NS/NAME  the pod explained exactly as `asched explain` does
  (the callback runs asched.explain's explain_pod: the same model, not a recomputation).

Every path is under /inspector, so the ops server's Gate authorizes it as a non-resource
URL with a SubjectAccessReview, like /metrics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import orjson
from aiohttp import web

from asched.inspector.snapshot import Inspector
from asched.inspector.stream import TooManyClients

PREFIX = "/inspector"
ExplainFn = Callable[[str, str], Awaitable[dict[str, Any]]]

_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def _asset(name: str) -> bytes:
    return resources.files("asched.inspector").joinpath("static", name).read_bytes()


def routes(inspector: Inspector, explain: ExplainFn | None = None) -> list[web.RouteDef]:
    # Read once: package data does not change while asched runs.
    assets = {name: _asset(name) for name in _STATIC}

    async def page(_request: web.Request) -> web.StreamResponse:
        return _static("index.html")

    async def redirect(_request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(f"{PREFIX}/")

    async def static(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in _STATIC:
            raise web.HTTPNotFound()
        return _static(name)

    def _static(name: str) -> web.Response:
        return web.Response(body=assets[name], headers={"Content-Type": _STATIC[name], **_HEADERS})

    async def snapshot(_request: web.Request) -> web.StreamResponse:
        return _json(inspector.encoded())

    async def events(request: web.Request) -> web.StreamResponse:
        try:
            slot = inspector.broadcaster.subscribe()
        except TooManyClients as exc:
            raise web.HTTPServiceUnavailable(text=str(exc)) from None
        try:
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", **_HEADERS})
            await resp.prepare(request)
            if slot.pending is None:
                slot.put(inspector.encoded())  # the first paint need not wait for a tick
            while True:
                data = await slot.take()
                # write() waits for the socket to drain: a slow browser holds only this
                # task, and its slot keeps only the newest snapshot meanwhile.
                await resp.write(b"data: " + data + b"\n\n")
        finally:
            inspector.broadcaster.unsubscribe(slot)

    async def explain_pod(request: web.Request) -> web.StreamResponse:
        if explain is None:
            raise web.HTTPNotImplemented(text="explain is not available in this process")
        ns, _, name = request.query.get("pod", "").partition("/")
        if not ns or not name:
            raise web.HTTPBadRequest(text="pod=NAMESPACE/NAME is required")
        try:
            out = await explain(ns, name)
        except LookupError as exc:
            raise web.HTTPNotFound(text=str(exc)) from None
        return _json(orjson.dumps(out))

    return [
        web.get(PREFIX, redirect),
        web.get(f"{PREFIX}/", page),
        web.get(f"{PREFIX}/static/{{name}}", static),
        web.get(f"{PREFIX}/api/snapshot", snapshot),
        web.get(f"{PREFIX}/api/events", events),
        web.get(f"{PREFIX}/api/explain", explain_pod),
    ]


def _json(body: bytes) -> web.Response:
    return web.Response(body=body, headers={"Content-Type": "application/json", **_HEADERS})
