"""The thin API boundary the scheduler and plugins talk through.

Implemented over one aiohttp session with keep-alive and a qps/burst limiter (see
rest.py); tests may implement it in memory for unit tests only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol


class ApiError(Exception):
    """A non-2xx answer from the API server."""

    def __init__(
        self, status: int, reason: str, message: str, method: str = "", path: str = ""
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path
        super().__init__(f"{method} {path}: {status} {reason}: {message}")

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def gone(self) -> bool:
        return self.status == 410


class TransportError(Exception):
    """The request got no usable answer: connection refused or reset, TLS failure, timeout,
    a success body that is not JSON, or a watch stream cut off mid-event. Retrying later
    may succeed."""


# What a KubeClient call raises when no answer arrived: RestClient wraps every network
# failure in TransportError, and OSError (TimeoutError and ConnectionError included) covers
# clients that do not wrap them. Handlers that retry catch these and ApiError, and
# nothing else: any other exception is a bug (asched.base.errors.report_unexpected).
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (TransportError, OSError)
# Every way a request can fail that is not a bug.
REQUEST_ERRORS: tuple[type[Exception], ...] = (ApiError, *TRANSPORT_ERRORS)


class KubeClient(Protocol):
    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """JSON request; returns the decoded body (orjson) or raises ApiError.

        Raises TransportError when no answer arrived."""
        ...

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        """A watch: yields raw newline-delimited JSON lines; raises ApiError on non-2xx."""
        ...

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST the pod's binding subresource; ApiError(409) when already bound."""
        ...

    async def close(self) -> None: ...
