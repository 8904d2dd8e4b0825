"""PrioritySort: the default QueueSort (kube-scheduler plugins/queuesort).

Guarantees a strict weak order over queued pods: higher `spec.priority` first, and among
equal priorities the pod that entered the queue earlier (QueuedPodInfo.timestamp) first.
"""

from __future__ import annotations

from asched.framework.handle import Handle
from asched.framework.interfaces import QueueSortPlugin
from asched.framework.registry import PluginSpec
from asched.framework.types import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort(QueueSortPlugin):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod.priority, b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


SPEC = PluginSpec(NAME, PrioritySort, None)
