"""An in-memory API server for explain's unit tests: canned GETs, every request recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from asched.client.protocol import ApiError


class FakeKube:
    """Answers GET from `objects` (path -> body) and `lists` (path -> items); a path in
    `missing` is a 404, any other path an empty list.

    `requests` records every (method, path); `writes` only those that are not GET, which
    is what a read-only command must never produce.
    """

    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}
        self.lists: dict[str, list[dict[str, Any]]] = {}
        self.missing: set[str] = set()
        self.requests: list[tuple[str, str]] = []

    @property
    def writes(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[0] != "GET"]

    def add(self, path: str, *items: dict[str, Any]) -> None:
        self.lists.setdefault(path, []).extend(items)

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        self.requests.append((method, path))
        if method != "GET" or path in self.missing:
            raise ApiError(404, "NotFound", f"{path} not found", method, path)
        if path in self.objects:
            return self.objects[path]
        return {"metadata": {"resourceVersion": "7"}, "items": self.lists.get(path, [])}

    async def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        self.requests.append(("WATCH", path))
        empty: tuple[bytes, ...] = ()  # nothing in these tests watches
        for line in empty:
            yield line

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self.requests.append(("BIND", f"{namespace}/{name}"))

    async def close(self) -> None:
        pass
