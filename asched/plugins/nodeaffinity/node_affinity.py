"""NodeAffinity: the pod's nodeSelector and node affinity, plus profile-enforced rules.

Mirrors kube-scheduler v1.37 plugins/nodeaffinity:
- PreFilter answers Skip when nothing constrains the pod; otherwise it stores the pod's
  required selector (nodeSelector AND required terms) and, when every required term
  names nodes through `matchFields metadata.name In`, narrows the cycle to those nodes
  ("pod affinity terms conflict", UnschedulableAndUnresolvable, when they cannot overlap).
- Filter rejects with UnschedulableAndUnresolvable: "node(s) didn't match
  scheduler-enforced node affinity" for args.addedAffinity, "node(s) didn't match Pod's
  node affinity/selector" for the pod's own rules.
- Score sums the weights of matching preferred terms (the pod's and the added ones),
  then NormalizeScore scales to [0, 100].
- Events: node added or relabelled, with isSchedulableAfterNodeChange's hint.

Seed-article extension (args labelKey/labelValue): Filter also rejects nodes without
that label value, as Unschedulable like the article's plugin ("node(s) didn't have
label <key>=<value>"), and Score adds 100 for nodes that have it, before normalization.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from asched.api import Node, Pod
from asched.api.affinity import PreferredSchedulingTerm
from asched.api.labels import IN, NodeSelector, NodeSelectorTerm, go_aggregate, gt_lt_value_errors
from asched.framework.columns import BatchVerdict, Bools, Int64s, NodeColumns
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreNormalizer,
    ScorePlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.selectors import label_equals_rows, selector_rows, term_rows
from asched.framework.signatures import (
    NODE_AFFINITY,
    NODE_SELECTOR,
    SignFragment,
    SignResult,
    node_affinity,
)
from asched.framework.status import Code, Status, error, skip
from asched.framework.types import MAX_NODE_SCORE, NodeScore, PreFilterResult
from asched.plugins.helpers import as_node, default_normalize_score, default_normalize_scores
from asched.plugins.nodeaffinity.args import OBJECT_NAME_FIELD, NodeAffinityArgs

NAME = "NodeAffinity"
Args = NodeAffinityArgs

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
# Score a node with the enforced label gets, as the article's plugin gave it.
LABEL_MATCH_SCORE = MAX_NODE_SCORE

_REJECT_POD = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,), NAME)
_REJECT_ENFORCED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,), NAME)
_CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,), NAME)
_SKIP = skip(NAME)

# (weight, term), weight-0 terms already dropped (component-helpers does the same).
_Weighted = tuple[tuple[int, NodeSelectorTerm], ...]


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """The pod's nodeSelector (as key/value pairs) AND its required node selector."""

    selector: tuple[tuple[str, str], ...]
    required: NodeSelector | None

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        na = pod.affinity.node_affinity if pod.affinity is not None else None
        return cls(tuple(pod.node_selector.items()), na.required if na is not None else None)

    def matches(self, node: Node) -> bool:
        labels = node.labels
        for key, value in self.selector:
            if labels.get(key) != value:
                return False
        return self.required is None or self.required.matches(labels, node.name)

    def matches_rows(self, cols: NodeColumns, rows: Int64s) -> Bools:
        """`matches` for many nodes, from the label columns."""
        out = np.ones(len(rows), dtype=np.bool_)
        for key, value in self.selector:
            out &= label_equals_rows(cols, key, value, rows)
        if self.required is not None:
            out &= selector_rows(cols, self.required, rows)
        return out


_PRE_FILTER_KEY: StateKey[RequiredNodeAffinity] = StateKey("PreFilter" + NAME)
_PRE_SCORE_KEY: StateKey[_Weighted] = StateKey("PreScore" + NAME)


def _weighted(terms: Sequence[PreferredSchedulingTerm]) -> _Weighted:
    return tuple((t.weight, t.term) for t in terms if t.weight != 0)


def _pod_preferred(pod: Pod) -> _Weighted:
    na = pod.affinity.node_affinity if pod.affinity is not None else None
    return _weighted(na.preferred) if na is not None else ()


def _preferred_parse_error(pod: Pod) -> str:
    """component-helpers nodeaffinity.NewPreferredSchedulingTerms' error for the pod's
    preferred terms, "" when they parse: a Gt/Lt value ParseInt rejects. Weight-0 and
    empty terms are skipped but keep their index in the path ("[i].matchExpressions[j]").
    """
    na = pod.affinity.node_affinity if pod.affinity is not None else None
    if na is None:
        return ""
    errs: list[str] = []
    for i, t in enumerate(na.preferred):
        if t.weight == 0:
            continue
        for j, req in enumerate(t.term.match_expressions):
            errs += gt_lt_value_errors(req, f"[{i}].matchExpressions[{j}]")
    return go_aggregate(errs) if errs else ""


def _named_nodes(required: NodeSelector) -> frozenset[str] | None:
    """Nodes every required term restricts itself to by name; None when some term does not."""
    names: set[str] = set()
    for term in required.terms:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == OBJECT_NAME_FIELD and req.operator == IN:
                # Requirements of one term are ANDed: intersect.
                term_names = set(req.values) if term_names is None else term_names & req.values
        if term_names is None:
            # Terms are ORed; one without a name restriction allows every node.
            return None
        names |= term_names
    return frozenset(names)


class NodeAffinityPlugin(
    PreFilterPlugin,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreNormalizer,
    EnqueueExtensions,
):
    def __init__(self, args: NodeAffinityArgs | None, handle: Handle) -> None:
        self._args = args or NodeAffinityArgs()
        self._handle = handle
        added = self._args.added_affinity
        self._added_required: NodeSelector | None = added.required if added else None
        self._added_preferred: _Weighted = _weighted(added.preferred) if added else ()
        self._label_key = self._args.label_key
        self._label_value = self._args.label_value
        self._reject_label = Status(
            Code.UNSCHEDULABLE,
            (f"node(s) didn't have label {self._label_key}={self._label_value}",),
            NAME,
        )

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """NodeAffinity.SignPod."""
        return (
            SignFragment(NODE_AFFINITY, node_affinity(pod)),
            SignFragment(NODE_SELECTOR, pod.node_selector),
        )

    def _enforced_match(self, node: Node) -> bool:
        """The profile's own rules: addedAffinity's required selector and the label pair."""
        if self._added_required is not None and not self._added_required.matches(
            node.labels, node.name
        ):
            return False
        return not self._label_key or node.labels.get(self._label_key) == self._label_value

    # --- PreFilter / Filter ------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        required = RequiredNodeAffinity.of(pod)
        if (
            required.required is None
            and not required.selector
            and self._added_required is None
            and not self._label_key
        ):
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, required)
        if required.required is None or not required.required.terms:
            return None, None
        names = _named_nodes(required.required)
        if names is None:
            return None, None
        if not names:
            return None, _CONFLICT
        return PreFilterResult(names), None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        """`filter` from the label columns: the same checks in the same order."""
        n = len(rows)
        verdict = np.zeros(n, dtype=np.int8)  # 0 passes; else an index into `rejects`
        rejects = (_REJECT_ENFORCED, self._reject_label, _REJECT_POD)
        if self._added_required is not None:
            verdict[~selector_rows(cols, self._added_required, rows)] = 1
        if self._label_key:
            bad = ~label_equals_rows(cols, self._label_key, self._label_value, rows)
            verdict[bad & (verdict == 0)] = 2
        required = state.get(_PRE_FILTER_KEY)
        if required is None:
            required = RequiredNodeAffinity.of(pod)
        bad = ~required.matches_rows(cols, rows)
        verdict[bad & (verdict == 0)] = 3
        if not verdict.any():
            return None
        return BatchVerdict.coded(verdict, rejects)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        if self._added_required is not None and not self._added_required.matches(
            node.labels, node.name
        ):
            return _REJECT_ENFORCED
        if self._label_key and node.labels.get(self._label_key) != self._label_value:
            return self._reject_label
        required = state.get(_PRE_FILTER_KEY)
        if required is None:
            # PreFilter disabled in this profile: compute here, as kube-scheduler does.
            required = RequiredNodeAffinity.of(pod)
        if not required.matches(node):
            return _REJECT_POD
        return None

    # --- PreScore / Score --------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        # NodeAffinity.PreScore: a preferred term that does not parse fails the cycle.
        parse_error = _preferred_parse_error(pod)
        if parse_error:
            return error(parse_error, NAME)
        preferred = _pod_preferred(pod)
        if not preferred and not self._added_preferred and not self._label_key:
            return _SKIP
        state.write(_PRE_SCORE_KEY, preferred)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None:
            raise LookupError(f"node {node_info.name!r} has no Node object")
        labels, name = node.labels, node.name
        preferred = state.get(_PRE_SCORE_KEY)
        if preferred is None:
            preferred = _pod_preferred(pod)
        count = 0
        for weight, term in self._added_preferred:
            if term.matches(labels, name):
                count += weight
        for weight, term in preferred:
            if term.matches(labels, name):
                count += weight
        if self._label_key and labels.get(self._label_key) == self._label_value:
            count += LABEL_MATCH_SCORE
        return count

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        """`score` from the label columns: the weight of every matching term, summed."""
        preferred = state.get(_PRE_SCORE_KEY)
        if preferred is None:
            preferred = _pod_preferred(pod)
        scores = np.zeros(len(rows), dtype=np.int64)
        for weight, term in (*self._added_preferred, *preferred):
            scores += weight * term_rows(cols, term, rows)
        if self._label_key:
            scores += LABEL_MATCH_SCORE * label_equals_rows(
                cols, self._label_key, self._label_value, rows
            )
        return scores

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)

    # --- queueing hints ----------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._after_node_change,
            ),
        )

    def _after_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        modified = as_node(new)
        if modified is None:
            return QueueingHint.QUEUE
        if not self._enforced_match(modified):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity.of(pod)
        if not required.matches(modified):
            return QueueingHint.QUEUE_SKIP
        original = as_node(old)
        if original is None:
            return QueueingHint.QUEUE
        # isSchedulableAfterNodeChange: an update only helps when it turned a node the
        # pod's own required affinity did not match into one it matches; addedAffinity
        # does not count in "was matching", as in Go. The seed's labelKey/labelValue
        # (asched's own arguments, no Go counterpart) does, so a node relabelled to
        # carry the pair still requeues the pod.
        label_was_ok = not self._label_key or (
            original.labels.get(self._label_key) == self._label_value
        )
        if required.matches(original) and label_was_ok:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


SPEC = PluginSpec(NAME, NodeAffinityPlugin, NodeAffinityArgs)
