"""Matching pods per topology domain over the cluster, for PreFilter and PreScore.

A node is eligible when it has every constraint's topology key (if required) and passes
the constraint's inclusion policies; its domain then exists even with no matching pod
(that is what keeps the global minimum at 0 for an empty domain). `node_contribution` is
the one definition of what a node adds; `count_domains` sums it over the nodes, either from
scratch or through a NodeMemo so that only nodes changed since the last cycle of a pod of
the same shape are recounted.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from asched.api import Pod
from asched.framework.nodeinfo import NodeInfo
from asched.plugins.nodememo import MemoCache, NodeMemo
from asched.plugins.podtopologyspread.constraints import (
    Constraint,
    NodeInclusion,
    count_matching,
    node_has_all_keys,
)

# Per constraint: (topology value, matching pods on the node), or None when excluded.
Contribution = tuple[tuple[str, int] | None, ...]


class DomainCounts:
    """Per constraint: domain -> matching pods, and domain -> eligible nodes in it."""

    __slots__ = ("counts", "nodes")

    def __init__(self, n: int) -> None:
        self.counts: list[dict[str, int]] = [{} for _ in range(n)]
        self.nodes: list[dict[str, int]] = [{} for _ in range(n)]

    def apply(self, old: Contribution | None, new: Contribution | None) -> None:
        if old is not None:
            self._add(old, -1)
        if new is not None:
            self._add(new, 1)

    def _add(self, contribution: Contribution, sign: int) -> None:
        for i, item in enumerate(contribution):
            if item is None:
                continue
            value, count = item
            nodes, counts = self.nodes[i], self.counts[i]
            n = nodes.get(value, 0) + sign
            if n:
                nodes[value] = n
                counts[value] = counts.get(value, 0) + sign * count
            else:
                # The domain's last eligible node left: the domain is gone.
                del nodes[value]
                del counts[value]


def node_contribution(
    ni: NodeInfo,
    constraints: Sequence[Constraint],
    inclusion: NodeInclusion,
    namespace: str,
    require_all_keys: bool,
) -> Contribution | None:
    node = ni.node
    if node is None:
        return None
    labels = node.labels
    if require_all_keys and not node_has_all_keys(labels, constraints):
        return None
    affinity_ok: bool | None = None
    taints_ok: bool | None = None
    out: list[tuple[str, int] | None] = []
    for c in constraints:
        if c.honor_node_affinity:
            if affinity_ok is None:
                affinity_ok = inclusion.affinity_matches(node)
            if not affinity_ok:
                out.append(None)
                continue
        if c.honor_node_taints:
            if taints_ok is None:
                taints_ok = inclusion.tolerates_taints(node)
            if not taints_ok:
                out.append(None)
                continue
        # Without the key (allowed only when keys are not required) the domain is "".
        out.append((labels.get(c.topology_key, ""), count_matching(ni.pods, c, namespace)))
    return tuple(out)


def memo_key(constraints: Sequence[Constraint], pod: Pod, require_all_keys: bool) -> Hashable:
    """Everything a contribution depends on besides the NodeInfo."""
    honor_affinity = any(c.honor_node_affinity for c in constraints)
    honor_taints = any(c.honor_node_taints for c in constraints)
    na = pod.affinity.node_affinity if pod.affinity is not None else None
    return (
        pod.namespace,
        require_all_keys,
        tuple(
            (c.topology_key, c.selector, c.honor_node_affinity, c.honor_node_taints)
            for c in constraints
        ),
        (frozenset(pod.node_selector.items()), na.required if na is not None else None)
        if honor_affinity
        else None,
        pod.tolerations if honor_taints else None,
    )


MemoEntry = tuple[NodeMemo[Contribution], DomainCounts]


def count_domains(
    constraints: Sequence[Constraint],
    pod: Pod,
    nodes: Sequence[NodeInfo],
    require_all_keys: bool,
    memo: MemoCache[MemoEntry] | None = None,
) -> DomainCounts:
    """The domain counts over `nodes`. With a memo the result is shared: do not mutate it."""
    inclusion = NodeInclusion(pod)
    ns = pod.namespace

    def contribution(ni: NodeInfo) -> Contribution | None:
        return node_contribution(ni, constraints, inclusion, ns, require_all_keys)

    if memo is None:
        agg = DomainCounts(len(constraints))
        for ni in nodes:
            agg.apply(None, contribution(ni))
        return agg
    node_memo, agg = memo.get_or_create(
        memo_key(constraints, pod, require_all_keys),
        lambda: (NodeMemo[Contribution](), DomainCounts(len(constraints))),
    )
    node_memo.refresh(nodes, contribution, agg.apply)
    return agg
