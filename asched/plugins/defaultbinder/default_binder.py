"""DefaultBinder: bind the pod to its node through the API's binding subresource.

Mirrors kube-scheduler plugins/defaultbinder: one POST of a Binding per pod. Any request
failure (a 409 because the pod is already bound, a 404 because it is gone, a connection
cut by a restarting API server, ...) is left to the framework, which turns it into an
Error status carrying the API server's message (Framework.run_bind), so the binding cycle
unreserves the pod and requeues it; the pod's uid in the binding keeps a recreated pod of
the same name from being bound by mistake.
"""

from __future__ import annotations

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.handle import Handle
from asched.framework.interfaces import BindPlugin
from asched.framework.registry import PluginSpec
from asched.framework.status import Status

NAME = "DefaultBinder"


class DefaultBinder(BindPlugin):
    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        # A RequestError (ApiError, TransportError) propagates: the framework's Bind runner
        # classifies it and returns the Error status (kube-scheduler: any bind error).
        await self._handle.client.bind(pod.namespace, pod.name, pod.uid, node_name)
        return None


SPEC = PluginSpec(NAME, DefaultBinder, None)
