"""NodeInfo: a node with the pods on it and what they request, as kube-scheduler keeps it.

The cache owns live NodeInfos and bumps `generation` on every change; the snapshot clones
only those whose generation moved, so a scheduling cycle reads a stable view while the
informers keep mutating the cache between the cycle's awaits.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from asched.api import Node, Pod, Resource
from asched.api.pod import HostPort

_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


@dataclass(slots=True, frozen=True)
class ImageStateSummary:
    """An image on a node, and on how many nodes it is (kube-scheduler ImageStateSummary)."""

    size: int
    num_nodes: int


def _has_pod_affinity(pod: Pod) -> bool:
    a = pod.affinity
    return a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None)


def _has_required_anti_affinity(pod: Pod) -> bool:
    a = pod.affinity
    return a is not None and a.pod_anti_affinity is not None and bool(a.pod_anti_affinity.required)


class NodeInfo:
    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None) -> None:
        self.node = node
        # Plain attributes, not properties: Filter and Score read them for every node.
        self.name = node.name if node is not None else ""
        self.allocatable = node.allocatable if node is not None else Resource()
        self.pods: list[Pod] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.used_ports: dict[HostPort, int] = {}
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = next_generation()

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.name
        self.allocatable = node.allocatable
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        if _has_pod_affinity(pod):
            self.pods_with_affinity.append(pod)
        if _has_required_anti_affinity(pod):
            self.pods_with_required_anti_affinity.append(pod)
        self._account(pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove by uid; False if the pod was not here."""
        for i, p in enumerate(self.pods):
            if p.uid == pod.uid:
                del self.pods[i]
                self.pods_with_affinity = [q for q in self.pods_with_affinity if q.uid != pod.uid]
                self.pods_with_required_anti_affinity = [
                    q for q in self.pods_with_required_anti_affinity if q.uid != pod.uid
                ]
                # Account with the stored copy: the caller's may be a newer version.
                self._account(p, -1)
                return True
        return False

    def _account(self, pod: Pod, sign: int) -> None:
        if sign > 0:
            self.requested.add(pod.requests)
            self.non_zero_requested.add(pod.non_zero_requests)
        else:
            self.requested.sub(pod.requests)
            self.non_zero_requested.sub(pod.non_zero_requests)
        # A set, as kube-scheduler's HostPortInfo: removing any pod that uses a port frees
        # it, even if another pod on the node (placed around the scheduler) uses it too.
        for hp in pod.host_ports:
            if sign > 0:
                self.used_ports[hp] = 1
            else:
                self.used_ports.pop(hp, None)
        self.generation = next_generation()

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.allocatable = self.allocatable
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.requested = self.requested.copy()
        c.non_zero_requested = self.non_zero_requested.copy()
        c.used_ports = dict(self.used_ports)
        c.image_states = self.image_states
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"
