"""What the scheduler provides to a profile's runtime (and through it, to plugins).

Kept as a Protocol so the framework never imports the scheduler: the scheduler passes an
object satisfying it, and unit tests pass a small fake.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from asched.api import Pod
from asched.base.clock import Clock
from asched.base.errors import UnexpectedErrors
from asched.client.protocol import KubeClient
from asched.framework.handle import EventRecorder
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister


class RuntimeMetrics(UnexpectedErrors, Protocol):
    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None: ...

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def plugin_evaluation(self, plugin: str, point: str, profile: str, count: int = 1) -> None: ...

    def permit_wait(self, result: str, seconds: float) -> None: ...

    def batch_attempt(self, profile: str, result: str) -> None: ...

    def batch_flushed(self, profile: str, reason: str) -> None: ...

    def batch_rescore(self, profile: str) -> None: ...


class SchedulerServices(Protocol):
    @property
    def clock(self) -> Clock: ...

    @property
    def client(self) -> KubeClient: ...

    @property
    def events(self) -> EventRecorder: ...

    @property
    def snapshot(self) -> SnapshotLister: ...

    @property
    def parallelism(self) -> int: ...

    @property
    def metrics(self) -> RuntimeMetrics | None: ...

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]: ...

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]: ...

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]: ...

    def has_nominated_pods(self) -> bool: ...

    def activate(self, pods: Sequence[Pod]) -> None: ...


@runtime_checkable
class PodGroupIndex(Protocol):
    """Optional: the members of a PodGroup without scanning their namespace.

    A scheduler that indexes pods by group provides this; without it the runtime filters
    `pods_in_namespace`, which costs O(pods in the namespace) per call.
    """

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]: ...


@runtime_checkable
class SchedulingGroupIndex(Protocol):
    """Optional: the members of a native PodGroup (spec.schedulingGroup) by index."""

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]: ...

    def scheduling_group_size(self, namespace: str, name: str) -> int: ...

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int: ...
