"""Pods held at Permit, waiting to be allowed, rejected or timed out.

Mirrors kube-scheduler's waitingPod: each Permit plugin that said Wait has its own
deadline; the pod proceeds when every one of them has allowed it, and is rejected as soon
as any plugin rejects it or its deadline passes. Any plugin may allow or reject any
waiting pod (that is how a gang's last member releases its siblings).
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio

from asched.api import Pod
from asched.base.clock import Clock
from asched.base.durations import go_duration
from asched.framework.status import Code, Status


class WaitingPod:
    __slots__ = ("_deadlines", "_done", "_result", "node_name", "pod")

    def __init__(self, pod: Pod, node_name: str, timeouts: dict[str, float], now: float) -> None:
        self.pod = pod
        self.node_name = node_name
        # plugin -> (absolute deadline on the clock, the timeout it asked for)
        self._deadlines = {p: (now + t, t) for p, t in timeouts.items()}
        self._done = anyio.Event()
        self._result: Status | None = None

    @property
    def pending_plugins(self) -> list[str]:
        return sorted(self._deadlines)

    def allow(self, plugin: str) -> None:
        self._deadlines.pop(plugin, None)
        if not self._deadlines and self._result is None:
            self._result = Status(Code.SUCCESS, (), plugin)
            self._done.set()

    def reject(self, plugin: str, message: str) -> None:
        if self._result is None:
            self._result = Status(Code.UNSCHEDULABLE, (message,), plugin)
            self._done.set()

    @property
    def decided(self) -> bool:
        return self._result is not None

    async def wait(self, clock: Clock) -> Status:
        """Block until allowed or rejected; the earliest plugin deadline rejects."""
        if self._result is None and self._deadlines:
            plugin, (deadline, timeout) = min(self._deadlines.items(), key=lambda kv: kv[1][0])
            if not await clock.wait(self._done, deadline - clock.now()):
                self.reject(
                    plugin,
                    f"rejected due to timeout after waiting {go_duration(timeout)} "
                    f"at plugin {plugin}",
                )
        assert self._result is not None
        return self._result


class WaitingPods:
    """The waiting pods of one framework, by pod uid."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def reject(self, uid: str, plugin: str, message: str) -> bool:
        wp = self._pods.get(uid)
        if wp is None:
            return False
        wp.reject(plugin, message)
        return True
