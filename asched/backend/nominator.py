"""Pods nominated to nodes: where preemption promised room that is not free yet.

Mirrors kube-scheduler's backend/queue nominator. A pod is nominated to a node when its
status.nominatedNodeName is set, or when preemption picks the node before that status
is written (so the next cycles already see the nomination). Filter runs account for
nominated pods of equal or higher priority, so the room preemption freed is not taken
by someone else.

Guarantees: at most one nomination per pod (by UID); an empty node name clears it; a
pod that is already bound is never nominated; `nominated_pods_for_node` returns the
latest pod version the nominator was given, in nomination order.
"""

from __future__ import annotations

import structlog

from asched.api import Pod

log = structlog.get_logger(__name__)


class Nominator:
    def __init__(self) -> None:
        # node -> uid -> pod; dicts keep nomination order and make removal O(1).
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._node_of)

    def add_nominated(self, pod: Pod, node: str | None = None) -> None:
        """Nominate `pod` to `node`; None means "use the pod's status.nominatedNodeName".

        kube-scheduler's addNominatedPod: ModeOverride when `node` is given, ModeNoop
        (read the pod's status) otherwise. The old nomination is dropped first.
        """
        self.delete_nominated(pod)
        target = pod.nominated_node_name if node is None else node
        if not target:
            return
        if pod.node_name:
            log.debug("nomination_skipped_bound_pod", pod=pod.key, node=pod.node_name)
            return
        self._node_of[pod.uid] = target
        self._by_node.setdefault(target, {})[pod.uid] = pod

    def update_nominated(self, old: Pod | None, new: Pod) -> None:
        """Replace the pod's version, keeping an in-memory nomination the update lacks.

        kube-scheduler's UpdateNominatedPod: a nomination made by preemption is kept when
        the update carries no nominatedNodeName on either side (the status write has not
        landed yet); any change of nominatedNodeName in the update wins.
        """
        node: str | None = None
        old_nnn = old.nominated_node_name if old is not None else ""
        if not old_nnn and not new.nominated_node_name:
            node = self._node_of.get(new.uid)
        self.add_nominated(new, node)

    def delete_nominated(self, pod: Pod) -> None:
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return
        pods = self._by_node[node]
        pods.pop(pod.uid, None)
        if not pods:
            del self._by_node[node]

    def nominated_node(self, uid: str) -> str:
        return self._node_of.get(uid, "")

    def nominated_pods_for_node(self, node: str) -> list[Pod]:
        pods = self._by_node.get(node)
        return list(pods.values()) if pods else []
