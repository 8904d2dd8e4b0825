"""An in-memory stand-in for the API server's review endpoints (unit tests only)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from asched.client.protocol import TransportError

Answer = Callable[[dict[str, Any]], Any]


def token_review(
    username: str | None,
    *,
    groups: tuple[str, ...] = (),
    uid: str = "",
    extra: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """A TokenReview answer; *username* None: not authenticated."""
    if username is None:
        return {"status": {"authenticated": False}}
    user: dict[str, Any] = {"username": username, "uid": uid, "groups": list(groups)}
    if extra:
        user["extra"] = extra
    return {"status": {"authenticated": True, "user": user}}


def access_review(allowed: bool, reason: str = "") -> dict[str, Any]:
    return {"status": {"allowed": allowed, "reason": reason}}


@dataclass
class ReviewServer:
    """Answers POSTs to the review paths with `answers[path](body)`; records every body."""

    answers: dict[str, Answer] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    down: bool = False

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body in self.calls if p == path]

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        assert method == "POST", method
        self.calls.append((path, body))
        if self.down:
            raise TransportError(f"POST {path}: ClientConnectorError: connection refused")
        return self.answers[path](body)

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None
