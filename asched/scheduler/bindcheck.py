"""Whether a Binding that failed without a clear answer was applied after all.

A Binding POST may reach the API server and be written to etcd even though asched never
hears back. The connection can break after the request was sent, the answer can be too
late, or kube-apiserver can answer 5xx while etcd still commits the write.
kube-scheduler's handleBindingCycleError forgets the assumed pod at once in that case and
requeues it. If the write had landed, the pod's room on its node is free in the cache until
the informer brings the bound pod back. Another pod can be placed in that room, and the
node is overcommitted. The fault suite hit this when kube-apiserver was killed with a
Binding on the wire, which cut the pods watch at the same moment.

So the binding cycle asks first: it keeps the pod assumed and reads the pod back from the
API server until it gets an answer (asched.client.readback). A server that cannot be
reached cannot bind another pod either, so holding the room while waiting costs nothing.
Only a failure that may have been applied is checked
(asched.client.protocol.may_have_been_applied), so at most the binds that were in flight
when the connection broke are checked; a refused connection is not.
"""

from __future__ import annotations

import enum

from asched.api import Pod, decode_pod
from asched.client.readback import ReadBack, Unread


class Landed(enum.Enum):
    """What the API server says about a pod whose Binding failed without a clear answer."""

    HERE = "here"  # bound to the chosen node: the Binding was applied
    NOT_BOUND = "not_bound"  # still unbound: the Binding failed
    ELSEWHERE = "elsewhere"  # bound to another node by someone else (as a 409)
    GONE = "gone"  # deleted, or its name now belongs to another pod (as a 404)
    UNKNOWN = "unknown"  # the server would not say: the failure stands, as in Go


class BindCheck:
    """Reads a pod from the API server to learn whether its Binding was applied."""

    def __init__(self, reader: ReadBack) -> None:
        self._reader = reader

    async def landed(self, pod: Pod, node: str) -> Landed:
        """Where the API server has *pod* (asched.client.readback: asked until it answers
        with the pod or a 404; UNKNOWN when it keeps refusing)."""
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        current = await self._reader.read(path, decode_pod, subject=pod.key)
        if current is Unread.REFUSED:
            return Landed.UNKNOWN
        if current is Unread.NOT_FOUND or current.uid != pod.uid:
            return Landed.GONE
        if not current.node_name:
            return Landed.NOT_BOUND
        return Landed.HERE if current.node_name == node else Landed.ELSEWHERE
