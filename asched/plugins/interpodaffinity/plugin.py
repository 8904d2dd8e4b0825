"""The InterPodAffinity plugin: pod affinity and anti-affinity, required and preferred.

Mirrors kube-scheduler's interpodaffinity (plugin.go). PreFilter counts the matching pods
per topology pair (see filtering.py) and answers Skip when the pod has no required terms
and no existing pod's required anti-affinity matches it; PreScore sums weights per pair
(see scoring.py) and answers Skip when nothing contributes. Terms with a namespaceSelector
read namespace labels from a namespaces informer this plugin asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asched.api import Node, Pod
from asched.api.affinity import PodAffinityTerm
from asched.framework.columns import BatchVerdict, Int64s, NodeColumns, Unbatchable
from asched.framework.cycle_state import CycleState
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
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.signatures import LABELS, SignFragment, SignResult, unsignable
from asched.framework.status import Status, error, skip
from asched.framework.types import NodeScore, PreFilterResult
from asched.plugins.interpodaffinity.args import Args
from asched.plugins.interpodaffinity.counting import MemoEntry, sum_scores
from asched.plugins.interpodaffinity.filtering import (
    NAME,
    PRE_FILTER_KEY,
    compute_pre_filter_state,
    filter_node,
    filter_rows,
)
from asched.plugins.interpodaffinity.namespaces import NAMESPACES, Namespace, namespace_labels
from asched.plugins.interpodaffinity.readkeys import (
    ReadKeys,
    required_anti_affinity_terms,
    scored_terms,
)
from asched.plugins.interpodaffinity.scoring import (
    PRE_SCORE_KEY,
    PreScoreState,
    node_score,
    normalize,
    normalize_array,
    score_rows,
)
from asched.plugins.interpodaffinity.terms import (
    WeightedTerm,
    existing_terms_match_all,
    required_terms,
    resolve,
    resolve_all,
    term_matches,
)
from asched.plugins.nodememo import MemoCache

_Q = QueueingHint.QUEUE
_SKIP = QueueingHint.QUEUE_SKIP


class InterPodAffinity(
    PreFilterPlugin,
    FilterPlugin,
    PreFilterExtensions,
    PreScorePlugin,
    ScorePlugin,
    ScoreNormalizer,
    EnqueueExtensions,
):
    # Every pod with pod (anti-)affinity terms is refused (sign_pod).
    refuses_signing_often = True

    def __init__(self, args: Args | None, handle: Handle) -> None:
        self._args = args or Args()
        self._handle = handle
        # Pair counts of recent pod shapes, refreshed per cycle from changed nodes only.
        self._filter_memo: MemoCache[MemoEntry] = MemoCache()
        self._score_memo: MemoCache[MemoEntry] = MemoCache()
        # The label keys existing pods' terms read, which decide a memo hit (readkeys.py);
        # one per node list it is refreshed over, so that no list change recomputes them.
        self._anti_keys = ReadKeys(required_anti_affinity_terms)
        self._score_keys = {all_pods: ReadKeys(scored_terms) for all_pods in (False, True)}

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """InterPodAffinity.SignPod: a pod with affinity terms depends on where the others
        are; otherwise its labels, which existing pods' terms may select (unless the
        preferred terms of existing pods are ignored)."""
        aff = pod.affinity
        if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None):
            return unsignable("pods with InterPodAffinity are not signable", NAME)
        if self._args.ignore_preferred_terms_of_existing_pods:
            return ()
        return (SignFragment(LABELS, pod.labels),)

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (NAMESPACES,)

    def _namespaces(self) -> ObjectStore[Namespace]:
        store: ObjectStore[Namespace] = self._handle.store(NAMESPACES)
        return store

    # ---- PreFilter / Filter ---------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        a = pod.affinity
        affinity = required_terms(a.pod_affinity if a is not None else None)
        anti = required_terms(a.pod_anti_affinity if a is not None else None)
        with_anti = self._handle.snapshot.have_pods_with_required_anti_affinity()
        if not affinity and not anti and not with_anti:
            return None, skip(NAME)
        store = self._namespaces()
        s = compute_pre_filter_state(
            pod,
            affinity_terms=resolve_all(affinity, pod.namespace, store),
            anti_affinity_terms=resolve_all(anti, pod.namespace, store),
            namespace_labels=namespace_labels(store, pod.namespace),
            nodes_with_anti_affinity_pods=with_anti,
            all_nodes=nodes,  # every node of the snapshot, as in kube-scheduler
            memo=self._filter_memo,
            read_keys=self._anti_keys,
        )
        if not s.existing_anti and not affinity and not anti:
            return None, skip(NAME)
        state.write(PRE_FILTER_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return error(f"reading {PRE_FILTER_KEY.name}: PreFilter did not run", NAME)
        if node_info.node is None:
            return error("node not found", NAME)
        return filter_node(s, node_info.node)

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            raise Unbatchable  # the per-node path reports the Error
        return filter_rows(s, cols, rows)

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, other: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return error(f"reading {PRE_FILTER_KEY.name}: PreFilter did not run", NAME)
        s.update_with_pod(other, node_info.node, delta)
        return None

    # ---- PreScore / Score -----------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        a = pod.affinity
        pref_aff = a.pod_affinity.preferred if a is not None and a.pod_affinity else ()
        pref_anti = a.pod_anti_affinity.preferred if a is not None and a.pod_anti_affinity else ()
        has_constraints = bool(pref_aff or pref_anti)
        if self._args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return skip(NAME)
        snapshot = self._handle.snapshot
        # Without preferred terms of its own, only pods with (anti-)affinity can matter.
        candidates = (
            snapshot.node_infos() if has_constraints else snapshot.have_pods_with_affinity()
        )
        if not candidates:
            return skip(NAME)
        store = self._namespaces()
        topology_score = sum_scores(
            pod,
            preferred=tuple(
                WeightedTerm(w.weight, resolve(w.term, pod.namespace, store)) for w in pref_aff
            ),
            preferred_anti=tuple(
                WeightedTerm(w.weight, resolve(w.term, pod.namespace, store)) for w in pref_anti
            ),
            ns_labels=namespace_labels(store, pod.namespace),
            nodes=candidates,
            all_pods=has_constraints,
            hard_weight=self._args.hard_pod_affinity_weight,
            memo=self._score_memo,
            read_keys=self._score_keys[has_constraints],
        )
        if not topology_score:
            return skip(NAME)
        state.write(PRE_SCORE_KEY, PreScoreState(topology_score))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        return node_score(state.read(PRE_SCORE_KEY), node.labels) if node is not None else 0

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        return score_rows(state.read(PRE_SCORE_KEY), cols, rows)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_KEY)
        if s is not None:
            normalize(s, scores)
        return None

    def normalize_batch(self, state: CycleState, pod: Pod, scores: Int64s) -> Int64s:
        s = state.get(PRE_SCORE_KEY)
        return scores if s is None else normalize_array(s, scores)

    # ---- queueing hints -------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """kube-scheduler v1.37.2 InterPodAffinity.EventsToRegister, hint for hint."""
        return (
            # Add: an assigned pod may satisfy affinity; UpdatePodLabel: labels may now
            # match affinity or stop matching anti-affinity; Delete: an anti-affinity
            # match may be gone.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                ),
                self._hint_pod_change,
            ),
            # The pod's own labels: they may now satisfy its own affinity or stop
            # matching other pods' anti-affinity.
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
                self._hint_target_label_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._hint_node_change,
            ),
        )

    def _hint_pod_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterAssignedPodChange."""
        old_pod = old if isinstance(old, Pod) else None
        new_pod = new if isinstance(new, Pod) else None
        if old_pod is None and new_pod is None:
            return _Q
        # Neither assigned nor nominated: it never counts.
        if any(
            p is not None and not p.node_name and not p.nominated_node_name
            for p in (old_pod, new_pod)
        ):
            return _SKIP
        terms, anti = _required(pod)
        ns = pod.namespace
        if old_pod is not None and new_pod is not None:
            if not existing_terms_match_all(terms, ns, old_pod) and existing_terms_match_all(
                terms, ns, new_pod
            ):
                return _Q
            if _matches_any(anti, ns, old_pod) and not _matches_any(anti, ns, new_pod):
                return _Q
            return _SKIP
        if new_pod is not None:
            return _Q if existing_terms_match_all(terms, ns, new_pod) else _SKIP
        assert old_pod is not None
        if _matches_any(anti, ns, old_pod):
            return _Q
        # The deleted pod's own required anti-affinity may have kept the pod out.
        _, deleted_anti = _required(old_pod)
        if _matches_any(deleted_anti, old_pod.namespace, pod):
            return _Q
        return _SKIP

    def _hint_target_label_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """isSchedulableAfterTargetPodUpdateLabel: always Queue (for the pod itself)."""
        modified = new if isinstance(new, Pod) else None
        if modified is not None and modified.uid != pod.uid:
            return _SKIP
        return _Q

    def _hint_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """isSchedulableAfterNodeChange."""
        if not isinstance(new, Node):
            return _Q
        original = old if isinstance(old, Node) else None
        terms, anti = _required(pod)
        for t in terms:
            key = t.topology_key
            if original is None:
                if key in new.labels:
                    return _Q
                continue
            if key in new.labels and (
                key not in original.labels or original.labels[key] != new.labels[key]
            ):
                return _Q
        for t in anti:
            key = t.topology_key
            if original is None:
                return _Q  # any node added may be outside the anti-affinity's domains
            if key in original.labels and (
                key not in new.labels or original.labels[key] != new.labels[key]
            ):
                return _Q
        return _SKIP


def _matches_any(terms: Sequence[PodAffinityTerm], owner_namespace: str, pod: Pod) -> bool:
    """podMatchesAnyAffinityTerms for unresolved terms (queueing hints: no ns labels)."""
    return any(term_matches(t, owner_namespace, pod, _NO_NS_LABELS) for t in terms)


_NO_NS_LABELS: dict[str, str] = {}


def _required(pod: Pod) -> tuple[tuple[PodAffinityTerm, ...], tuple[PodAffinityTerm, ...]]:
    a = pod.affinity
    if a is None:
        return (), ()
    return required_terms(a.pod_affinity), required_terms(a.pod_anti_affinity)
