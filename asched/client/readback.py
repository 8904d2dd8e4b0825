"""Reading an object back after a write whose answer was lost.

A write may reach the API server and be committed even though its answer never comes
back: the connection broke after the request was sent, the answer came too late, or
kube-apiserver answered 5xx while etcd still committed it (`may_have_been_applied`). A
caller that would release something on failure (the binding cycle its assumed pod,
DynamicResources its in-flight allocation) first reads the object back to learn whether
the write landed, and releases only when it did not.

The read is asked again until the server answers: a server that cannot be reached
cannot take another write either, so whatever the caller holds meanwhile costs nothing.
A refusal that will not clear soon (a 403 while a restarted server's RBAC caches fill, a
401) is asked again for `refused_for` seconds, then the caller gets `Unread.REFUSED` and
goes on as if the write had failed, as kube-scheduler always does.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable
from typing import Any, TypeVar

import structlog

from asched.base.clock import Clock
from asched.client.protocol import REQUEST_ERRORS, ApiError, KubeClient, failure_fields

log = structlog.get_logger(__name__)

T = TypeVar("T")

# The pause between two reads starts here and doubles up to MAX_WAIT, with jitter, so
# that the reads of many cut writes do not all reach a restarting server together.
FIRST_WAIT = 0.25
MAX_WAIT = 2.0
# How long an answer that will not change soon (a 403, a 401) is asked again.
REFUSED_FOR = 30.0


class Unread(enum.Enum):
    """Why a read-back has no object."""

    NOT_FOUND = "not_found"  # a 404: the object is gone
    REFUSED = "refused"  # the server would not say within refused_for


class ReadBack:
    """GETs an object until the API server answers with it or a 404."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        first_wait: float = FIRST_WAIT,
        max_wait: float = MAX_WAIT,
        refused_for: float = REFUSED_FOR,
    ) -> None:
        self._client = client
        self._clock = clock
        self._first_wait = first_wait
        self._max_wait = max_wait
        self._refused_for = refused_for

    async def read(self, path: str, decode: Callable[[Any], T], *, subject: str) -> T | Unread:
        """The object at *path*, decoded. An unreachable, throttled (429) or failing (5xx)
        server is asked again for as long as it takes; any other refusal for
        `refused_for` seconds, then REFUSED, logged once at warning with *subject*."""
        wait = self._first_wait
        give_up: float | None = None
        while True:
            try:
                raw = await self._client.request("GET", path)
            except REQUEST_ERRORS as exc:
                if isinstance(exc, ApiError) and exc.not_found:
                    return Unread.NOT_FOUND
                if isinstance(exc, ApiError) and not exc.kind.retriable:
                    now = self._clock.now()
                    give_up = now + self._refused_for if give_up is None else give_up
                    if now >= give_up:
                        log.warning("read_back_refused", subject=subject, **failure_fields(exc))
                        return Unread.REFUSED
                log.debug("read_back_retry", subject=subject, wait_s=wait, **failure_fields(exc))
            else:
                return decode(raw)
            await self._clock.sleep(wait * random.uniform(0.5, 1.0))
            wait = min(wait * 2, self._max_wait)
