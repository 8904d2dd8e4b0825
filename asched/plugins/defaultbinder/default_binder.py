"""DefaultBinder: bind the pod to its node through the API's binding subresource.

Mirrors kube-scheduler plugins/defaultbinder: one POST of a Binding per pod. Any API
failure (a 409 because the pod is already bound, a 404 because it is gone, ...) becomes
an Error status carrying the API server's message, so the binding cycle unreserves the
pod and requeues it; the pod's uid in the binding keeps a recreated pod of the same name
from being bound by mistake.
"""

from __future__ import annotations

import structlog

from asched.api import Pod
from asched.client.protocol import ApiError
from asched.framework.cycle_state import CycleState
from asched.framework.handle import Handle
from asched.framework.interfaces import BindPlugin
from asched.framework.registry import PluginSpec
from asched.framework.status import Code, Status

NAME = "DefaultBinder"

log = structlog.get_logger(__name__)


class DefaultBinder(BindPlugin):
    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            await self._handle.client.bind(pod.namespace, pod.name, pod.uid, node_name)
        except ApiError as exc:
            log.debug(
                "bind_failed", pod=pod.key, node=node_name, status=exc.status, reason=exc.reason
            )
            return Status(Code.ERROR, (exc.message or str(exc),), NAME, exc)
        return None


SPEC = PluginSpec(NAME, DefaultBinder, None)
