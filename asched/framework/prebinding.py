"""Pods in their PreBind phase, which preemption may cancel instead of deleting them.

Mirrors kube-scheduler 1.37's podsInPreBindMap (framework/runtime/pods_in_prebind_map.go):
the binding cycle registers a pod whose PreBind plugins have work (the pre-flights said
so) for as long as PreBind runs. The preemption Executor asks for a victim here after
the pods waiting at Permit: CancelPod cancels the victim's PreBind (its cancel scope
here; a context in Go), so its binding fails with the preemption's message and nothing
is deleted. Once PreBind is over the binding cycle calls MarkPrebound: from then on the
pod cannot be cancelled any more, and a cancellation that came first fails the binding.
"""

from __future__ import annotations

import anyio


class PodInPreBind:
    __slots__ = ("_finished", "message", "scope")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.message = ""  # why it was cancelled; "" while it was not
        self._finished = False

    def cancel(self, message: str) -> bool:
        """CancelPod: False when PreBind is already over (the pod goes on to Bind)."""
        if self._finished:
            return False
        if not self.message:
            self.message = message
            self.scope.cancel()
        return True

    def mark_prebound(self) -> bool:
        """MarkPrebound: False when the pod was cancelled first."""
        if self.message:
            return False
        self._finished = True
        return True


class PodsInPreBind:
    """uid -> the pod's PreBind, while it runs."""

    def __init__(self) -> None:
        self._pods: dict[str, PodInPreBind] = {}

    def add(self, uid: str) -> PodInPreBind:
        entry = self._pods[uid] = PodInPreBind()
        return entry

    def get(self, uid: str) -> PodInPreBind | None:
        return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)
