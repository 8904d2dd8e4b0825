"""A small async REST client for kube-apiserver, for the harness, tests, demo and benchmarks.

It is deliberately not asched's production client: it speaks raw JSON paths
(``/api/v1/namespaces/x/pods``), returns orjson-decoded dicts, and authenticates with a
bearer token. One aiohttp session with keep-alive serves all requests of a client, so
creating thousands of objects reuses a handful of connections.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import ssl
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiohttp
import anyio
import orjson
import yaml

JsonObject = dict[str, Any]
Params = Mapping[str, str | int | bool]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class ApiError(Exception):
    """kube-apiserver answered with a non-2xx status."""

    def __init__(self, method: str, path: str, status: int, body: bytes) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.body: JsonObject = {}
        try:
            decoded = orjson.loads(body) if body else {}
            if isinstance(decoded, dict):
                self.body = decoded
        except orjson.JSONDecodeError:
            pass
        self.reason = str(self.body.get("reason", ""))
        message = self.body.get("message") or body[:300].decode(errors="replace")
        super().__init__(f"{method} {path}: {status} {self.reason}: {message}")


def _params(params: Params | None) -> dict[str, str] | None:
    if not params:
        return None
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}


class WatchStream:
    """Events of one watch response, decoded line by line."""

    def __init__(self, path: str, content: aiohttp.StreamReader) -> None:
        self._path = path
        self._content = content

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> JsonObject:
        while True:
            line = await self._content.readline()
            if not line:
                raise StopAsyncIteration
            if not line.strip():
                continue
            event: JsonObject = orjson.loads(line)
            if event.get("type") == "ERROR":
                status = event.get("object") or {}
                raise ApiError("WATCH", self._path, int(status.get("code", 500)), line)
            return event


class RestClient:
    """Bearer-token JSON client. Use as ``async with RestClient(...) as c:``.

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
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._ssl: ssl.SSLContext | bool
        if ca_pem is None:
            self._ssl = False
        else:
            self._ssl = ssl.create_default_context(cadata=ca_pem.decode("ascii"))
        self._connections = connections
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    async def from_kubeconfig(cls, path: Path, **kwargs: Any) -> RestClient:
        """A client for the current context of a token-based kubeconfig."""
        config = yaml.safe_load(await anyio.Path(path).read_text())
        ctx_name = config["current-context"]
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
        ca = cluster.get("certificate-authority-data")
        verify = ca and not cluster.get("insecure-skip-tls-verify")
        ca_pem = base64.b64decode(ca) if verify else None
        return cls(cluster["server"], user["token"], ca_pem=ca_pem, **kwargs)

    async def __aenter__(self) -> Self:
        connector = aiohttp.TCPConnector(limit=self._connections, ssl=self._ssl)
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=self._timeout, headers=self._headers
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def request_raw(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> tuple[int, bytes]:
        """Send a request and return (status, body) without raising on HTTP errors."""
        if self._session is None:
            raise RuntimeError("RestClient used outside `async with`")
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else None
        async with self._session.request(
            method, self.server + path, params=_params(params), data=data, headers=headers
        ) as resp:
            return resp.status, await resp.read()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JsonObject:
        status, raw = await self.request_raw(
            method, path, params=params, body=body, content_type=content_type
        )
        if not 200 <= status < 300:
            raise ApiError(method, path, status, raw)
        if not raw:
            return {}
        decoded = orjson.loads(raw)
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
        items: builtins.list[JsonObject] = []
        query = dict(params or {})
        query["limit"] = page_size
        while True:
            page = await self.get(path, params=query)
            items.extend(page.get("items") or [])
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                return items
            query["continue"] = cont

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
        if self._session is None:
            raise RuntimeError("RestClient used outside `async with`")
        query: dict[str, str | int | bool] = {**(params or {}), "watch": True}
        if resource_version:
            query["resourceVersion"] = resource_version
        no_timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with self._session.get(
            self.server + path, params=_params(query), timeout=no_timeout
        ) as resp:
            if resp.status != 200:
                raise ApiError("GET", path, resp.status, await resp.read())
            yield WatchStream(path, resp.content)

    async def exists(self, path: str) -> bool:
        """True on 200, False on 404; other statuses raise ApiError."""
        status, raw = await self.request_raw("GET", path)
        if status == 404:
            return False
        if not 200 <= status < 300:
            raise ApiError("GET", path, status, raw)
        return True
