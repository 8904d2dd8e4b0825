"""The Handle plugins receive: a facade over the scheduler's services for one profile.

Kept apart from the runtime (runtime.py runs the extension points; this is only what a
plugin may reach), as kube-scheduler keeps framework.Handle apart from frameworkImpl's
Run* methods. Everything delegates to the SchedulerServices the scheduler provides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Pod
from asched.api.podgroup import pod_group_name
from asched.client.protocol import KubeClient
from asched.framework.clock import Clock
from asched.framework.handle import EventRecorder
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.services import PodGroupIndex, RuntimeMetrics, SchedulerServices
from asched.framework.waiting import WaitingPods


class ServicesHandle:
    def __init__(self, profile_name: str, services: SchedulerServices) -> None:
        self._profile_name = profile_name
        self._services = services
        # Checked once: isinstance against a runtime Protocol is slow for a per-pod call.
        self._group_index = services if isinstance(services, PodGroupIndex) else None
        self._waiting = WaitingPods()

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> Clock:
        return self._services.clock

    @property
    def client(self) -> KubeClient:
        return self._services.client

    @property
    def snapshot(self) -> SnapshotLister:
        return self._services.snapshot

    @property
    def waiting_pods(self) -> WaitingPods:
        return self._waiting

    @property
    def events(self) -> EventRecorder:
        return self._services.events

    @property
    def parallelism(self) -> int:
        return self._services.parallelism

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        return self._services.store(request)

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self._services.pods_in_namespace(namespace)

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        if self._group_index is not None:
            return self._group_index.pods_in_group(namespace, name)
        pods = self._services.pods_in_namespace(namespace)
        return [p for p in pods if pod_group_name(p) == name]

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._services.nominated_pods_for_node(node_name)

    def activate(self, pods: Sequence[Pod]) -> None:
        self._services.activate(pods)

    @property
    def metrics(self) -> RuntimeMetrics | None:
        return self._services.metrics

    def has_nominated_pods(self) -> bool:
        return self._services.has_nominated_pods()
