"""ClusterClient: the JSON-dict face of asched.client for the harness, tests, demo and benchmarks.

asched's production client (asched.client.rest.RestClient) does the HTTP: one keep-alive
aiohttp session, Status bodies turned into ApiError, transport failures into TransportError.
The harness wants something else on top of it: verbs named after HTTP (post, put, delete),
decoded dicts, whole collections in one call, a watch that yields decoded events, and no
client-side rate limit (creating 5000 kwok nodes should not wait for qps 50). This module
is that layer and nothing more; it owns no connection handling of its own.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio
import orjson
import yaml

from asched.client.connection import Connection
from asched.client.protocol import ApiError, TransportError
from asched.client.rest import RestClient
from asched.client.status import error_from_status

__all__ = [
    "JSON_PATCH",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "ApiError",
    "ClusterClient",
    "JsonObject",
    "TransportError",
    "WatchStream",
]

JsonObject = dict[str, Any]
Params = Mapping[str, str | int | bool]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def _params(params: Params | None) -> dict[str, str] | None:
    if not params:
        return None
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}


class WatchStream:
    """Events of one watch response, decoded line by line; an ERROR event raises ApiError."""

    def __init__(self, path: str, lines: AsyncIterator[bytes]) -> None:
        self._path = path
        self._lines = lines

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> JsonObject:
        while True:
            line = await anext(self._lines)  # StopAsyncIteration ends the stream
            if not line.strip():
                continue
            event: JsonObject = orjson.loads(line)
            if event.get("type") == "ERROR":
                raise error_from_status(event.get("object"), method="WATCH", path=self._path)
            return event


class ClusterClient:
    """Use as ``async with ClusterClient(...) as c:``.

    *ca_pem* verifies the server's certificate; without it TLS verification is off, which
    is only acceptable for the loopback clusters this package starts.
    """

    def __init__(
        self,
        server: str,
        token: str,
        *,
        ca_pem: bytes | None = None,
        connections: int = 64,
        timeout: float = 60.0,
    ) -> None:
        self.server = server.rstrip("/")
        connection = Connection.from_token(
            self.server, token, ca_pem=ca_pem, verify=ca_pem is not None
        )
        # qps <= 0: no client-side limit (see the module docstring).
        # Requests outside `async with` would leave an unclosed session behind.
        self._open = False
        self._rest = RestClient(
            connection, qps=-1, burst=0, timeout=timeout, connections=connections
        )

    @classmethod
    async def from_kubeconfig(cls, path: Path, **kwargs: Any) -> ClusterClient:
        """A client for the current context of a token-based kubeconfig (ours, see
        asched.localcluster.kubeconfig: inline CA data and a bearer token)."""
        config = yaml.safe_load(await anyio.Path(path).read_text())
        ctx_name = config["current-context"]
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
        ca = cluster.get("certificate-authority-data")
        verify = ca and not cluster.get("insecure-skip-tls-verify")
        ca_pem = base64.b64decode(ca) if verify else None
        return cls(cluster["server"], user["token"], ca_pem=ca_pem, **kwargs)

    @property
    def rest(self) -> RestClient:
        """The production client underneath, for code that takes a KubeClient."""
        return self._rest

    async def __aenter__(self) -> Self:
        self._open = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._open = False
        await self._rest.close()

    def _client(self) -> RestClient:
        if not self._open:
            raise RuntimeError("ClusterClient used outside `async with`")
        return self._rest

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JsonObject:
        decoded = await self._client().request(
            method, path, body=body, params=_params(params), content_type=content_type
        )
        if decoded is None:
            return {}
        return decoded if isinstance(decoded, dict) else {"items": decoded}

    async def get(self, path: str, *, params: Params | None = None) -> JsonObject:
        return await self.request("GET", path, params=params)

    async def post(self, path: str, body: Any, *, params: Params | None = None) -> JsonObject:
        return await self.request("POST", path, params=params, body=body)

    async def put(self, path: str, body: Any, *, params: Params | None = None) -> JsonObject:
        return await self.request("PUT", path, params=params, body=body)

    async def patch(
        self,
        path: str,
        body: Any,
        *,
        content_type: str = MERGE_PATCH,
        params: Params | None = None,
    ) -> JsonObject:
        return await self.request(
            "PATCH", path, params=params, body=body, content_type=content_type
        )

    async def delete(
        self, path: str, *, params: Params | None = None, body: Any = None
    ) -> JsonObject:
        return await self.request("DELETE", path, params=params, body=body)

    async def list(
        self, path: str, *, params: Params | None = None, page_size: int = 500
    ) -> builtins.list[JsonObject]:
        """All items of a collection, fetched in pages so no single response is huge."""
        items, _ = await self.list_with_version(path, params=params, page_size=page_size)
        return items

    async def list_with_version(
        self, path: str, *, params: Params | None = None, page_size: int = 500
    ) -> tuple[builtins.list[JsonObject], str]:
        """Like list(), plus the resourceVersion to start a watch from."""
        items: builtins.list[JsonObject] = []
        query = dict(params or {})
        query["limit"] = page_size
        while True:
            page = await self.get(path, params=query)
            items.extend(page.get("items") or [])
            meta = page.get("metadata") or {}
            if not meta.get("continue"):
                return items, str(meta.get("resourceVersion", ""))
            query["continue"] = meta["continue"]

    @contextlib.asynccontextmanager
    async def watch(
        self, path: str, *, resource_version: str = "", params: Params | None = None
    ) -> AsyncIterator[WatchStream]:
        """Open a watch; iterate the yielded stream for ``{"type", "object"}`` events.

        The stream ends when the server closes the watch (``timeoutSeconds``); an ERROR
        event (for example 410 Gone: *resource_version* is too old) is raised as ApiError.
        """
        query: dict[str, str | int | bool] = {**(params or {}), "watch": True}
        if resource_version:
            query["resourceVersion"] = resource_version
        async with self._client().open_stream(path, _params(query)) as lines:
            yield WatchStream(path, lines)

    async def request_raw(self, method: str, path: str) -> tuple[int, bytes]:
        """(status, body) without decoding or raising on HTTP errors: /readyz answers
        plain text, and probes only want the status."""
        return await self._client().send_raw(method, path)

    async def exists(self, path: str) -> bool:
        """True on 200, False on 404; other statuses raise ApiError."""
        try:
            await self._client().request("GET", path)
        except ApiError as err:
            if err.not_found:
                return False
            raise
        return True
