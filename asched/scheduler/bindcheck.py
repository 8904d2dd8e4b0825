"""Whether a Binding that failed without a clear answer was applied after all.

A Binding POST may reach the API server and be written to etcd even though asched never
hears back. The connection can break after the request was sent, the answer can be too
late, or kube-apiserver can answer 5xx while etcd still commits the write.
kube-scheduler's handleBindingCycleError forgets the assumed pod at once in that case and
requeues it. If the write had landed, the pod's room on its node is free in the cache until
the informer brings the bound pod back. Another pod can be placed in that room, and the
node is overcommitted. The fault suite hit this when kube-apiserver was killed with a
Binding on the wire, which cut the pods watch at the same moment.

So the binding cycle asks first: it keeps the pod assumed and reads the pod from the API
server until it gets an answer. A server that cannot be reached cannot bind another pod
either, so holding the room while waiting costs nothing. Only a failure that may have been
applied is checked (asched.client.protocol.may_have_been_applied), so at most the binds
that were in flight when the connection broke are checked; a refused connection is not.
"""

from __future__ import annotations

import enum
import random

import structlog

from asched.api import Pod, decode_pod
from asched.base.clock import Clock
from asched.client.protocol import REQUEST_ERRORS, ApiError, KubeClient, failure_fields

log = structlog.get_logger(__name__)

# The pause between two reads starts here and doubles up to CHECK_MAX_WAIT, with jitter,
# so that the checks of many cut Bindings do not all reach a restarting server together.
CHECK_FIRST_WAIT = 0.25
CHECK_MAX_WAIT = 2.0
# How long an answer that will not change soon (a 403 while a restarted server's RBAC
# caches fill, a 401) is retried before the check gives up. An unreachable or throttled
# server is retried for as long as it takes.
REFUSED_FOR = 30.0


class Landed(enum.Enum):
    """What the API server says about a pod whose Binding failed without a clear answer."""

    HERE = "here"  # bound to the chosen node: the Binding was applied
    NOT_BOUND = "not_bound"  # still unbound: the Binding failed
    ELSEWHERE = "elsewhere"  # bound to another node by someone else (as a 409)
    GONE = "gone"  # deleted, or its name now belongs to another pod (as a 404)
    UNKNOWN = "unknown"  # the server would not say: the failure stands, as in Go


class BindCheck:
    """Reads a pod from the API server to learn whether its Binding was applied."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        first_wait: float = CHECK_FIRST_WAIT,
        max_wait: float = CHECK_MAX_WAIT,
        refused_for: float = REFUSED_FOR,
    ) -> None:
        self._client = client
        self._clock = clock
        self._first_wait = first_wait
        self._max_wait = max_wait
        self._refused_for = refused_for

    async def landed(self, pod: Pod, node: str) -> Landed:
        """Where the API server has *pod*. Retries until it answers with the pod or a
        404; a refusal other than 429 or 5xx is retried for `refused_for` seconds, then
        the answer is UNKNOWN."""
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        wait = self._first_wait
        give_up: float | None = None
        while True:
            try:
                raw = await self._client.request("GET", path)
            except REQUEST_ERRORS as exc:
                if isinstance(exc, ApiError) and exc.not_found:
                    return Landed.GONE
                if isinstance(exc, ApiError) and not exc.kind.retriable:
                    now = self._clock.now()
                    give_up = now + self._refused_for if give_up is None else give_up
                    if now >= give_up:
                        log.warning("bind_check_refused", pod=pod.key, **failure_fields(exc))
                        return Landed.UNKNOWN
                log.debug("bind_check_retry", pod=pod.key, wait_s=wait, **failure_fields(exc))
            else:
                return _where(decode_pod(raw), pod, node)
            await self._clock.sleep(wait * random.uniform(0.5, 1.0))
            wait = min(wait * 2, self._max_wait)


def _where(current: Pod, pod: Pod, node: str) -> Landed:
    if current.uid != pod.uid:
        return Landed.GONE
    if not current.node_name:
        return Landed.NOT_BOUND
    return Landed.HERE if current.node_name == node else Landed.ELSEWHERE
