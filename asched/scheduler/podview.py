"""The pods a plugin sees through its handle: the informer's, with assumed placements.

Coscheduling counts a gang's members by what the scheduler believes, not only by what the
API server has confirmed: a member assumed on a node a moment ago is placed, even though
its Binding is still in flight. The informer store answers by index (namespace, PodGroup
key) so a census costs O(members), and the cache supplies the assumed node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from asched.api import Pod
from asched.api.podgroup import pod_group_key
from asched.backend.cache import Cache
from asched.informers.store import Store

GROUP_INDEX = "group"
SCHEDULING_GROUP_INDEX = "scheduling-group"
# The same, for the members the API server already has on a node.
BOUND_SCHEDULING_GROUP_INDEX = "bound-scheduling-group"


def scheduling_group_key(pod: Pod) -> str:
    """`namespace/name` of the pod's native PodGroup (spec.schedulingGroup), or ""."""
    return f"{pod.namespace}/{pod.scheduling_group}" if pod.scheduling_group else ""


def bound_scheduling_group_key(pod: Pod) -> str:
    return scheduling_group_key(pod) if pod.node_name else ""


# The indexers the pod informer's store must be built with for PodView to answer.
POD_INDEXERS: Mapping[str, Callable[[Pod], str]] = {
    GROUP_INDEX: pod_group_key,
    SCHEDULING_GROUP_INDEX: scheduling_group_key,
    BOUND_SCHEDULING_GROUP_INDEX: bound_scheduling_group_key,
}


class PodView:
    def __init__(self, store: Store[Pod], cache: Cache) -> None:
        self._store = store
        self._cache = cache

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self._with_assumed(self._store.in_namespace(namespace))

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._with_assumed(self._store.by_index(GROUP_INDEX, f"{namespace}/{name}"))

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._with_assumed(
            self._store.by_index(SCHEDULING_GROUP_INDEX, f"{namespace}/{name}")
        )

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        """How many pods name the native PodGroup, assigned or not: an index lookup."""
        return len(self._store.by_index(SCHEDULING_GROUP_INDEX, f"{namespace}/{name}"))

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        """How many of those pods are on a node, bound or assumed (kube-scheduler's
        PodGroupState.ScheduledPodsCount): two index lookups, no list.

        Equal to counting `pods_in_scheduling_group`'s pods with a node: a pod assumed
        in the cache has no node in the informer's copy until its binding is seen, and
        the cache stops counting it as assumed in the same informer callback.
        """
        key = f"{namespace}/{name}"
        bound = len(self._store.by_index(BOUND_SCHEDULING_GROUP_INDEX, key))
        return bound + self._cache.assumed_in_scheduling_group(key)

    def _with_assumed(self, pods: Mapping[str, Pod]) -> list[Pod]:
        """The informer's pods, with the cache's node for those assumed but not yet bound."""
        cache = self._cache
        return [
            (cache.get_pod(p.uid) or p) if not p.node_name and cache.is_assumed(p.uid) else p
            for p in pods.values()
        ]
