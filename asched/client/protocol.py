"""The thin API boundary the scheduler and plugins talk through.

Implemented over one aiohttp session with keep-alive and a qps/burst limiter (see
rest.py); tests may implement it in memory for unit tests only.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from enum import StrEnum
from typing import Any, Protocol


class FailureKind(StrEnum):
    """What kind of failure a request met: the one classification every write path uses.

    After client-go's helpers (apimachinery's errors.IsConflict, IsGone, IsInvalid,
    IsTooManyRequests, IsInternalError and the transport errors its retry wraps). The value
    is the `kind` label of asched_request_failures_total and the `kind` key of the log line.
    """

    TRANSPORT = "transport"  # refused, reset, TLS, closed before the answer was complete
    TIMEOUT = "timeout"  # no answer within the client's timeout
    CONFLICT = "conflict"  # 409: AlreadyExists, or a precondition or resourceVersion failed
    GONE = "gone"  # 410: the resourceVersion was compacted away
    INVALID = "invalid"  # 422: the object failed validation
    TOO_MANY_REQUESTS = "too_many_requests"  # 429: throttled (priority and fairness)
    SERVER_ERROR = "server_error"  # 5xx: the server (or a proxy before it) failed
    CLIENT_ERROR = "client_error"  # any other 4xx (404 NotFound, 403 Forbidden, ...)

    @property
    def retriable(self) -> bool:
        """Sending the same request again later may succeed: client-go's rest client
        retries these itself (request.go checkWait, IsRetryableResponse)."""
        return self in _RETRIABLE


_RETRIABLE = frozenset(
    {
        FailureKind.TRANSPORT,
        FailureKind.TIMEOUT,
        FailureKind.TOO_MANY_REQUESTS,
        FailureKind.SERVER_ERROR,
    }
)


def kind_of_status(status: int) -> FailureKind:
    """The FailureKind of a non-2xx HTTP status."""
    if status == 409:
        return FailureKind.CONFLICT
    if status == 410:
        return FailureKind.GONE
    if status == 422:
        return FailureKind.INVALID
    if status == 429:
        return FailureKind.TOO_MANY_REQUESTS
    if status >= 500:
        return FailureKind.SERVER_ERROR
    return FailureKind.CLIENT_ERROR


class RequestError(Exception):
    """A request to the API server failed in a way that is not a bug: the one exception
    family every KubeClient call raises for such failures. `kind` classifies it."""

    @property
    def kind(self) -> FailureKind:
        raise NotImplementedError


class ApiError(RequestError):
    """A non-2xx answer from the API server."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        method: str = "",
        path: str = "",
        *,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path
        # Seconds the server asked us to wait (a 429's or 5xx's details.retryAfterSeconds).
        self.retry_after = retry_after
        super().__init__(f"{method} {path}: {status} {reason}: {message}")

    @property
    def kind(self) -> FailureKind:
        return kind_of_status(self.status)

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def gone(self) -> bool:
        return self.status == 410


class TransportError(RequestError):
    """The request got no usable answer: connection refused or reset, TLS failure, timeout,
    a success body that is not JSON, or a watch stream cut off mid-event. Retrying later
    may succeed."""

    def __init__(self, message: str, *, timeout: bool = False, broken: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout
        # The connection broke after the request was sent (reset, closed before the
        # answer was complete), rather than never opening: client-go retries a GET then.
        self.broken = broken

    @property
    def kind(self) -> FailureKind:
        return FailureKind.TIMEOUT if self.timeout else FailureKind.TRANSPORT


def failure_kind(exc: BaseException) -> FailureKind | None:
    """The FailureKind of a request failure; None for anything else (a bug). OSError
    counts as a transport failure (TimeoutError as a timeout) for clients that do not wrap
    the network's errors."""
    if isinstance(exc, RequestError):
        return exc.kind
    if isinstance(exc, TimeoutError):
        return FailureKind.TIMEOUT
    if isinstance(exc, OSError):
        return FailureKind.TRANSPORT
    return None


# What a KubeClient call raises when no answer arrived: RestClient wraps every network
# failure in TransportError, and OSError (TimeoutError and ConnectionError included) covers
# clients that do not wrap them. Handlers that retry catch these and ApiError, and
# nothing else: any other exception is a bug (asched.base.errors.report_unexpected).
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (TransportError, OSError)
# Every way a request can fail that is not a bug (failure_kind is not None for each).
REQUEST_ERRORS: tuple[type[Exception], ...] = (RequestError, OSError)


@contextlib.contextmanager
def request_context(what: str) -> Iterator[None]:
    """A request failure raised inside carries *what* was being done (as an exception
    note), so a caller that lets it propagate still says where it failed: its message
    (`failure_message`) reads "<what>: <error>", as Go's fmt.Errorf("...: %w", err)."""
    try:
        yield
    except REQUEST_ERRORS as exc:
        exc.add_note(what)
        raise


def may_have_been_applied(exc: BaseException) -> bool:
    """Whether a failed write may still have been applied by the server. It may when the
    connection broke after the request was sent, when no answer came in time, or when
    the answer was a 5xx: kube-apiserver answers 500 or 504 when etcd is slow to confirm
    a write that can still commit. It was not applied when the connection never opened
    (refused, TLS) or when the answer was any other status."""
    if isinstance(exc, TransportError):
        return exc.broken or exc.timeout
    if isinstance(exc, ApiError):
        return exc.status >= 500
    # Clients that do not wrap the network's errors (failure_kind's OSError rule).
    return isinstance(exc, TimeoutError | ConnectionResetError | BrokenPipeError)


def write_target_gone(exc: BaseException) -> bool:
    """Whether a failed write found its object gone: a 404, or a 409 on the write's uid
    precondition (the name now belongs to a new object). A writer of status for an object
    (a PodGroup's, a claim's reservedFor) then has nothing left to write."""
    return failure_kind(exc) is FailureKind.CONFLICT or (
        isinstance(exc, ApiError) and exc.not_found
    )


def failure_message(exc: BaseException) -> str:
    """A request failure's text for a Status: the API server's message (or the transport
    error's), after the contexts `request_context` added, outermost first."""
    message = exc.message if isinstance(exc, ApiError) and exc.message else str(exc)
    for note in getattr(exc, "__notes__", ()):
        message = f"{note}: {message}"
    return message


def failure_fields(exc: BaseException) -> dict[str, str]:
    """The key-values every log line about a failed request carries: `kind` (a
    FailureKind value, "bug" for anything else) and `error` (the message)."""
    kind = failure_kind(exc)
    return {"kind": "bug" if kind is None else kind.value, "error": str(exc) or repr(exc)}


class FailureCounter(Protocol):
    """Counts routine request failures (asched_request_failures_total{verb,resource,kind});
    the metrics object has it. RestClient reports every failure it raises to one."""

    def request_failed(self, verb: str, resource: str, kind: FailureKind) -> None: ...


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

        Raises TransportError when no answer arrived. Both are RequestErrors with a
        `kind` (FailureKind)."""
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
