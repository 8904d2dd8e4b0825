"""Topology spread constraints as the plugin evaluates them (kube-scheduler common.go).

A pod's constraints are resolved once per cycle into `Constraint`s: the selector with the
pod's matchLabelKeys values merged in, minDomains defaulted to 1, the node inclusion
policies as booleans. The helpers here decide which nodes count for a constraint and how
many pods on a node match it. Selector semantics follow apimachinery: a missing selector
matches nothing; an empty one matches every pod but counts none (countPodsMatchSelector
returns 0 for an empty selector, which upstream keeps for compatibility).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from asched.api import Node, Pod
from asched.api.affinity import TopologySpreadConstraint
from asched.api.labels import (
    IN,
    LabelMatcher,
    LabelSelector,
    NodeSelector,
    Requirement,
    compile_selector,
    match_nothing,
)
from asched.plugins.helpers import DO_NOT_SCHEDULE_EFFECTS, find_untolerated_taint
from asched.plugins.podtopologyspread.args import HONOR

NAME = "PodTopologySpread"


@dataclass(slots=True, frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None matches nothing
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False
    matches: LabelMatcher = field(default=match_nothing, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "matches", compile_selector(self.selector))


def _merge_match_label_keys(
    selector: LabelSelector | None, keys: Sequence[str], pod_labels: Mapping[str, str]
) -> LabelSelector | None:
    """matchLabelKeys: AND the pod's own values for those keys into the selector."""
    if not keys or selector is None:
        # upstream mergeLabelSetWithSelector keeps a Nothing selector as it is.
        return selector
    extra = tuple(Requirement(k, IN, frozenset((pod_labels[k],))) for k in keys if k in pod_labels)
    if not extra:
        return selector
    return LabelSelector(extra + selector.requirements)


def build_constraints(
    specs: Iterable[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
    selector_override: LabelSelector | None = None,
) -> tuple[Constraint, ...]:
    """The constraints whose whenUnsatisfiable is `action` (filterTopologySpreadConstraints).

    `selector_override` replaces every selector (default constraints take the selector
    deduced from the pod's Services and controllers).
    """
    out = []
    for c in specs:
        if c.when_unsatisfiable != action:
            continue
        selector = selector_override if selector_override is not None else c.label_selector
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=_merge_match_label_keys(selector, c.match_label_keys, pod_labels),
                min_domains=c.min_domains if c.min_domains is not None else 1,
                honor_node_affinity=c.node_affinity_policy == HONOR,
                honor_node_taints=c.node_taints_policy == HONOR,
            )
        )
    return tuple(out)


def node_has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: every topology key is a label of the node."""
    return all(c.topology_key in labels for c in constraints)


def count_matching(pods: Iterable[Pod], c: Constraint, namespace: str) -> int:
    """Pods in `namespace`, not terminating, that `c` selects (countPodsMatchSelector)."""
    if c.selector is None or c.selector.is_empty():
        return 0
    match = c.matches
    n = 0
    for p in pods:
        # Terminating pods do not count (kubernetes #87621).
        if p.namespace == namespace and p.deletion_timestamp is None and match(p.labels):
            n += 1
    return n


class NodeInclusion:
    """Which nodes a constraint counts, per its nodeAffinityPolicy and nodeTaintsPolicy.

    Built once per pod: the pod's required node affinity (nodeSelector and
    requiredDuringScheduling terms) and its tolerations of NoSchedule/NoExecute taints.
    """

    __slots__ = ("_node_selector", "_required", "_tolerations")

    def __init__(self, pod: Pod) -> None:
        self._node_selector = pod.node_selector
        na = pod.affinity.node_affinity if pod.affinity is not None else None
        self._required: NodeSelector | None = na.required if na is not None else None
        self._tolerations = pod.tolerations

    def affinity_matches(self, node: Node) -> bool:
        labels = node.labels
        for k, v in self._node_selector.items():
            if labels.get(k) != v:
                return False
        return self._required is None or self._required.matches(labels, node.name)

    def tolerates_taints(self, node: Node) -> bool:
        if not node.taints:
            return True
        untolerated = find_untolerated_taint(
            node.taints, self._tolerations, DO_NOT_SCHEDULE_EFFECTS
        )
        return untolerated is None

    def includes(self, c: Constraint, node: Node) -> bool:
        """matchNodeInclusionPolicies."""
        if c.honor_node_affinity and not self.affinity_matches(node):
            return False
        return not (c.honor_node_taints and not self.tolerates_taints(node))
