"""The scheduler's cache: nodes, the pods assigned to them, and pods assumed in flight.

Mirrors kube-scheduler's backend/cache: after a pod is scheduled its placement is
*assumed* (counted on the node at once, so the next cycle does not overcommit) while the
binding cycle runs; the informer's event for the bound pod *confirms* it; a failed binding
*forgets* it. Assumed pods do not expire (kube-scheduler dropped the TTL): only binding
failure or the pod's deletion removes them.

Objects from the informers are never mutated: an assumed pod is a copy with node_name set.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from asched.api import Node, Pod
from asched.backend.snapshot import Snapshot
from asched.framework.nodeinfo import ImageStateSummary, NodeInfo, next_generation

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class _PodState:
    pod: Pod
    assumed: bool


class CacheError(RuntimeError):
    """The cache was asked to do something inconsistent (a scheduler bug)."""


class Cache:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        # Node names in insertion order (a dict as an ordered set); the snapshot lists
        # nodes in this order.
        self._order: dict[str, None] = {}
        self._pods: dict[str, _PodState] = {}
        # uid -> native PodGroup key ("namespace/name", or "") of each assumed pod, kept
        # alongside _pods so scheduler_cache_size{type="assumed_pods"} is read without
        # scanning every pod each second, and so GangScheduling's Permit counts a gang's
        # assumed members without listing them (_assumed_per_group).
        self._assumed: dict[str, str] = {}
        self._assumed_per_group: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._order_changed = True
        self._images: dict[str, dict[str, int]] = {}  # image -> node -> size

    # ---- nodes -----------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        ni = self._nodes.get(node.name)
        if ni is None:
            ni = NodeInfo()
            self._nodes[node.name] = ni
        if node.name not in self._order:
            self._order[node.name] = None
            self._order_changed = True
        self._set_node(ni, node)

    def update_node(self, node: Node) -> None:
        self.add_node(node)

    def remove_node(self, name: str) -> None:
        ni = self._nodes.get(name)
        if ni is None:
            return
        self._forget_images(name)
        if ni.pods:
            # Pods still point at it; keep the entry without a node (kube-scheduler does too)
            # so their deletion events can still be accounted.
            ni.node = None
            ni.generation = next_generation()
        else:
            del self._nodes[name]
        self._order.pop(name, None)
        self._order_changed = True
        self._dirty.add(name)

    def _set_node(self, ni: NodeInfo, node: Node) -> None:
        self._forget_images(node.name)
        for img in node.images:
            for name in img.names:
                self._images.setdefault(name, {})[node.name] = img.size_bytes
        ni.set_node(node)
        ni.image_states = self._image_summaries(node)
        self._dirty.add(node.name)

    def _image_summaries(self, node: Node) -> dict[str, ImageStateSummary]:
        """The node's images with the cache-wide state of each, as of now.

        kube-scheduler's NodeInfo shares each image's cache-wide state and counts its
        nodes when the snapshot clones the NodeInfo (ImageStateSummary.Snapshot), not
        when the node was added: a node added before the other holders of its images
        still sees them all in the first snapshot. The size is the one first recorded
        for the image (addNodeImageStates keeps it).
        """
        out: dict[str, ImageStateSummary] = {}
        for img in node.images:
            for name in img.names:
                holders = self._images.get(name)
                if holders and name not in out:
                    out[name] = ImageStateSummary(next(iter(holders.values())), len(holders))
        return out

    def _forget_images(self, node_name: str) -> None:
        ni = self._nodes.get(node_name)
        if ni is None or ni.node is None:
            return
        for img in ni.node.images:
            for name in img.names:
                holders = self._images.get(name)
                if holders is not None:
                    holders.pop(node_name, None)
                    if not holders:
                        del self._images[name]

    def node_names(self) -> list[str]:
        return list(self._order)

    def node_count(self) -> int:
        return len(self._order)

    def get_node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    # ---- pods ------------------------------------------------------------------
    def _node_info_for(self, node_name: str) -> NodeInfo:
        ni = self._nodes.get(node_name)
        if ni is None:
            ni = NodeInfo()  # pods may arrive before their node
            self._nodes[node_name] = ni
        return ni

    def _add(self, pod: Pod) -> None:
        self._node_info_for(pod.node_name).add_pod(pod)
        self._dirty.add(pod.node_name)

    def _remove(self, pod: Pod) -> None:
        ni = self._nodes.get(pod.node_name)
        if ni is None:
            return
        ni.remove_pod(pod)
        self._dirty.add(pod.node_name)
        if ni.node is None and not ni.pods:
            del self._nodes[pod.node_name]

    def assume_pod(self, pod: Pod) -> None:
        """Count `pod` (a copy with node_name set) on its node before it is bound."""
        if not pod.node_name:
            raise CacheError(f"assume_pod: pod {pod.key} has no node")
        if pod.uid in self._pods:
            raise CacheError(f"assume_pod: pod {pod.key} is already in the cache")
        self._add(pod)
        self._pods[pod.uid] = _PodState(pod, assumed=True)
        group = f"{pod.namespace}/{pod.scheduling_group}" if pod.scheduling_group else ""
        self._assumed[pod.uid] = group
        if group:
            self._assumed_per_group[group] = self._assumed_per_group.get(group, 0) + 1

    def forget_pod(self, pod: Pod) -> None:
        """Undo assume_pod (binding failed or was rejected); a no-op if not assumed."""
        st = self._pods.get(pod.uid)
        if st is None or not st.assumed:
            return
        self._remove(st.pod)
        del self._pods[pod.uid]
        self._unassume(pod.uid)

    def _unassume(self, uid: str) -> None:
        group = self._assumed.pop(uid, None)
        if group:
            left = self._assumed_per_group[group] - 1
            if left:
                self._assumed_per_group[group] = left
            else:
                del self._assumed_per_group[group]

    def assumed_in_scheduling_group(self, key: str) -> int:
        """How many assumed pods name the native PodGroup `key` ("namespace/name")."""
        return self._assumed_per_group.get(key, 0)

    def is_assumed(self, uid: str) -> bool:
        st = self._pods.get(uid)
        return st is not None and st.assumed

    def add_pod(self, pod: Pod) -> None:
        """An assigned pod seen by the informer: confirms an assumed pod or adds a new one."""
        st = self._pods.get(pod.uid)
        if st is not None:
            if st.assumed and st.pod.node_name != pod.node_name:
                log.warning(
                    "pod_bound_elsewhere",
                    pod=pod.key,
                    assumed=st.pod.node_name,
                    actual=pod.node_name,
                )
            self._remove(st.pod)
        self._add(pod)
        self._pods[pod.uid] = _PodState(pod, assumed=False)
        self._unassume(pod.uid)

    def update_pod(self, old: Pod, new: Pod) -> None:
        st = self._pods.get(new.uid)
        if st is None:
            self.add_pod(new)
            return
        self._remove(st.pod)
        self._add(new)
        self._pods[new.uid] = _PodState(new, assumed=False)
        self._unassume(new.uid)

    def remove_pod(self, pod: Pod) -> None:
        st = self._pods.pop(pod.uid, None)
        self._unassume(pod.uid)
        if st is not None:
            self._remove(st.pod)

    def get_pod(self, uid: str) -> Pod | None:
        st = self._pods.get(uid)
        return st.pod if st is not None else None

    def pod_count(self) -> int:
        """Pods in the cache, assumed ones included (kube-scheduler's podStates)."""
        return len(self._pods)

    def assumed_pod_count(self) -> int:
        return len(self._assumed)

    # ---- snapshot --------------------------------------------------------------
    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring `snapshot` up to date, cloning only nodes changed since the last call."""
        # Cache.UpdateSnapshot's safety check: a group cycle forgets what it simulated,
        # and a node left with simulated pods would hide the cache's own changes to it.
        leftover = snapshot.forget_all_assumed() if snapshot.assumed_pods() else 0
        if leftover:
            log.error("snapshot_assumed_pods_left", pods=leftover)
        rebuild_order = self._order_changed
        for name in self._dirty:
            ni = self._nodes.get(name)
            old = snapshot.get(name)
            if ni is None or ni.node is None:
                if old is not None:
                    snapshot._drop(name)
                    rebuild_order = True
                continue
            clone = ni.clone()
            if ni.node.images:
                clone.image_states = self._image_summaries(ni.node)
            if not snapshot._replace(clone):
                rebuild_order = True
        self._dirty.clear()
        if rebuild_order:
            snapshot.rebuild_lists(list(self._order))
        self._order_changed = False
