"""An in-memory stand-in for kube-apiserver's list/watch of one collection.

For unit tests of the informer's state machine only (integration tests use a real API
server). It keeps objects with increasing resourceVersions and a history of watch events,
serves paginated LISTs from snapshots, and lets a test close or break the live watches,
compact the history (watches from older versions get 410), expire continue tokens, make
the collection disappear (404), and inject arbitrary watch lines.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import orjson

from asched.client.protocol import ApiError, TransportError

Raw = dict[str, Any]


def key_of(raw: Raw) -> str:
    meta = raw["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def gone_status(rv: int, current: int) -> Raw:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": 410,
        "reason": "Expired",
        "message": f"too old resource version: {rv} ({current})",
    }


class FakeApi:
    """Implements KubeClient for the collection at *path*."""

    def __init__(self, path: str = "/api/v1/pods") -> None:
        self.path = path
        self.rv = 100
        self.objects: dict[str, Raw] = {}
        # (resourceVersion, line) in order; watches replay what follows their start version.
        self.history: list[tuple[int, bytes]] = []
        self.compacted = 0
        self.gone_as_http = False
        self.missing = False
        self.expire_next_continue = False
        self.list_faults: list[Exception] = []
        self.watch_faults: list[Exception] = []
        self.list_calls: list[dict[str, str]] = []
        self.watch_calls: list[dict[str, str]] = []
        self._snapshots: dict[int, tuple[int, list[Raw]]] = {}
        self._generation = 0
        # generation -> (history length when it was closed, exception to end with)
        self._closed: dict[int, tuple[int, Exception | None]] = {}
        self._changed = anyio.Event()

    # -- what tests do to the "cluster" -------------------------------------------------

    def _record(self, kind: str, raw: Raw) -> None:
        self.history.append((self.rv, orjson.dumps({"type": kind, "object": raw}) + b"\n"))
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def put(self, raw: Raw) -> Raw:
        """Create or replace an object (ADDED or MODIFIED); returns the stored copy."""
        self.rv += 1
        stored = copy.deepcopy(raw)
        stored["metadata"]["resourceVersion"] = str(self.rv)
        key = key_of(stored)
        kind = "MODIFIED" if key in self.objects else "ADDED"
        self.objects[key] = stored
        self._record(kind, stored)
        return stored

    def delete(self, key: str) -> None:
        self.rv += 1
        final = self.objects.pop(key)
        final["metadata"]["resourceVersion"] = str(self.rv)
        self._record("DELETED", final)

    def advance(self, n: int) -> None:
        """Other resources changed: the global resourceVersion moves on without events here."""
        self.rv += n

    def bookmark(self) -> None:
        self.history.append(
            (
                self.rv,
                orjson.dumps(
                    {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": str(self.rv)}}}
                )
                + b"\n",
            )
        )
        self._wake()

    def inject(self, line: bytes) -> None:
        """Send a raw line to the live watches."""
        self.history.append((self.rv, line + b"\n"))
        self._wake()

    def compact(self) -> None:
        """Forget history: watches from any older resourceVersion now get 410."""
        self.compacted = self.rv

    def close_watches(self, error: Exception | None = None) -> None:
        """End the live watches (cleanly, or raising *error*) after what they got so far."""
        self._closed[self._generation] = (len(self.history), error)
        self._generation += 1
        self._wake()

    # -- KubeClient -----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        await anyio.lowlevel.checkpoint()
        query = dict(params or {})
        self.list_calls.append(query)
        if self.list_faults:
            raise self.list_faults.pop(0)
        if self.missing or path != self.path or method != "GET":
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        limit = int(query.get("limit", "0")) or 1_000_000
        if "continue" in query:
            if self.expire_next_continue:
                self.expire_next_continue = False
                raise ApiError(410, "Expired", "The provided continue parameter is too old")
            snap_id, offset = (int(x) for x in query["continue"].split(":"))
            rv, items = self._snapshots[snap_id]
        else:
            snap_id, offset = len(self._snapshots), 0
            rv, items = self.rv, [copy.deepcopy(o) for _, o in sorted(self.objects.items())]
            self._snapshots[snap_id] = (rv, items)
        page = items[offset : offset + limit]
        meta: Raw = {"resourceVersion": str(rv)}
        if offset + limit < len(items):
            meta["continue"] = f"{snap_id}:{offset + limit}"
        return {"kind": "List", "metadata": meta, "items": page}

    async def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        await anyio.lowlevel.checkpoint()
        query = dict(params or {})
        self.watch_calls.append(query)
        if self.watch_faults:
            raise self.watch_faults.pop(0)
        if self.missing or path != self.path:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        start = int(query.get("resourceVersion") or 0)
        if start < self.compacted:
            if self.gone_as_http:
                raise ApiError(410, "Expired", "too old resource version")
            yield orjson.dumps({"type": "ERROR", "object": gone_status(start, self.rv)})
            return
        generation = self._generation
        index = next((i for i, (rv, _) in enumerate(self.history) if rv > start), len(self.history))
        while True:
            changed = self._changed
            closed = self._closed.get(generation)
            end = closed[0] if closed is not None else len(self.history)
            while index < end:
                yield self.history[index][1].rstrip(b"\n")
                index += 1
            if closed is not None:
                if closed[1] is not None:
                    raise closed[1]
                return
            await changed.wait()

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        pass


class Router:
    """A KubeClient that sends each path to the FakeApi serving it (404 for others)."""

    def __init__(self, *apis: FakeApi) -> None:
        self.apis = {api.path: api for api in apis}
        self.unknown = FakeApi("/nowhere")
        self.unknown.missing = True

    def _api(self, path: str) -> FakeApi:
        return self.apis.get(path, self.unknown)

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        return await self._api(path).request(method, path, body=body, params=params)

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        return self._api(path).stream_lines(path, params)

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        pass


BROKEN = TransportError("connection reset by peer")
