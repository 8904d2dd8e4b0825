"""Doubles for the Coscheduling tests: a handle with an informer view and a PodGroup store,
and a client that records PATCHes. Scenarios that need the scheduler's cycles use the real
ones, through cluster.py's GangCluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from asched.api import Node, Pod
from asched.api.podgroup import PodGroup, pod_group_name
from asched.client.protocol import ApiError
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.types import QueuedPodInfo
from asched.plugins.coscheduling import PODGROUP_INFORMER, Coscheduling, CoschedulingArgs
from tests.unit.plugins.fakes import FakeHandle, RecordingClient
from tests.unit.plugins.fakes_pods import FakeStore


class GroupStore(FakeStore):
    """The PodGroup informer's store, which tests change as the API would."""

    def put(self, pg: PodGroup) -> None:
        self._objects[pg.key] = pg

    def delete(self, key: str) -> None:
        self._objects.pop(key, None)


def not_found() -> ApiError:
    return ApiError(404, "NotFound", "podgroups not found")


class GangHandle(FakeHandle):
    """FakeHandle with an informer view of every pod (assigned or not) and PodGroups."""

    def __init__(self, nodes: Iterable[Node] = (), groups: Iterable[PodGroup] = ()) -> None:
        self.infos = {n.name: NodeInfo(n) for n in nodes}
        super().__init__(list(self.infos.values()), RecordingClient())
        self.pods: dict[str, Pod] = {}
        self.groups = GroupStore(groups)

    @property
    def client(self) -> RecordingClient:
        client = self._client
        assert isinstance(client, RecordingClient)
        return client

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        assert request.resource == PODGROUP_INFORMER.resource
        return self.groups

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return [p for p in self.pods.values() if p.namespace == namespace]

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.pods_in_namespace(namespace) if pod_group_name(p) == name]

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in self.pods_in_namespace(namespace) if p.scheduling_group == name]

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        return len(self.pods_in_scheduling_group(namespace, name))

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        return sum(1 for p in self.pods_in_scheduling_group(namespace, name) if p.node_name)

    def add(self, *pods: Pod) -> None:
        """Pods the informer has seen; assigned ones are also counted on their node."""
        for p in pods:
            self.pods[p.uid] = p
            if p.node_name:
                self.infos[p.node_name].add_pod(p)

    def remove(self, pod: Pod) -> None:
        old = self.pods.pop(pod.uid, None)
        if old is not None and old.node_name:
            self.infos[old.node_name].remove_pod(old)

    def activated_names(self) -> list[str]:
        return sorted({p.name for p in self.activated})


def plugin_for(handle: GangHandle, **args: int) -> Coscheduling:
    return Coscheduling(CoschedulingArgs(**args), handle)


def qpi(pod: Pod, timestamp: float = 0.0) -> QueuedPodInfo:
    return QueuedPodInfo(pod, timestamp)
