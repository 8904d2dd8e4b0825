"""Pod (anti-)affinity terms and what they match (kube-scheduler framework.AffinityTerm).

A term selects pods by labels within a set of namespaces: the listed `namespaces`, the
namespaces whose labels match `namespaceSelector`, or - with neither - the namespace of
the pod that owns the term. A missing label selector or namespace selector matches
nothing; an empty one matches everything.

The incoming pod's terms are resolved once per cycle into `ResolvedTerm`s, with the
namespaceSelector unrolled into names through the namespace store, so matching them
against the pods of the cluster needs no label lookups. Existing pods' terms are matched
in place against the incoming pod, with the incoming pod's namespace labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from asched.api import Pod
from asched.api.affinity import PodAffinity, PodAffinityTerm

# Shared with PodTopologySpread (a candidate for plugins/helpers.py).
from asched.api.labels import LabelMatcher, LabelSelector, compile_selector
from asched.framework.listers import ObjectStore
from asched.plugins.interpodaffinity.namespaces import Namespace

_NO_LABELS: Mapping[str, str] = {}


@dataclass(slots=True, frozen=True)
class ResolvedTerm:
    topology_key: str
    selector: LabelSelector | None
    namespaces: frozenset[str]
    # An empty namespaceSelector: every namespace.
    all_namespaces: bool = False
    _match: LabelMatcher = field(default=compile_selector(None), compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_match", compile_selector(self.selector))

    def matches(self, pod: Pod) -> bool:
        if self.all_namespaces or pod.namespace in self.namespaces:
            return self._match(pod.labels)
        return False


@dataclass(slots=True, frozen=True)
class WeightedTerm:
    weight: int
    term: ResolvedTerm


def _term_namespaces(term: PodAffinityTerm, owner_namespace: str) -> frozenset[str]:
    """getNamespacesFromPodAffinityTerm: the owner's namespace when nothing else is said."""
    if not term.namespaces and term.namespace_selector is None:
        return frozenset((owner_namespace,))
    return term.namespaces


def term_matches(
    term: PodAffinityTerm, owner_namespace: str, pod: Pod, ns_labels: Mapping[str, str]
) -> bool:
    """Does `pod` (in a namespace labelled `ns_labels`) match a term owned by another pod?"""
    # _term_namespaces without allocating: this runs for every existing pod's terms.
    if term.namespaces:
        in_scope = pod.namespace in term.namespaces
    else:
        in_scope = term.namespace_selector is None and pod.namespace == owner_namespace
    if not in_scope:
        sel = term.namespace_selector
        in_scope = sel is not None and sel.matches(ns_labels)
    if not in_scope:
        return False
    return term.label_selector is not None and term.label_selector.matches(pod.labels)


def matches_all(terms: Sequence[ResolvedTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    return bool(terms) and all(t.matches(pod) for t in terms)


def resolve(
    term: PodAffinityTerm, owner_namespace: str, namespaces: ObjectStore[Namespace] | None
) -> ResolvedTerm:
    """mergeAffinityTermNamespacesIfNotEmpty: unroll a non-empty namespaceSelector."""
    names = _term_namespaces(term, owner_namespace)
    sel = term.namespace_selector
    if sel is None:
        return ResolvedTerm(term.topology_key, term.label_selector, names)
    if sel.is_empty():
        return ResolvedTerm(term.topology_key, term.label_selector, names, all_namespaces=True)
    if namespaces is not None:
        names = names | {ns.name for ns in namespaces.list() if sel.matches(ns.labels)}
    return ResolvedTerm(term.topology_key, term.label_selector, names)


def required_terms(affinity: PodAffinity | None) -> tuple[PodAffinityTerm, ...]:
    return affinity.required if affinity is not None else ()


def resolve_all(
    terms: Iterable[PodAffinityTerm],
    owner_namespace: str,
    namespaces: ObjectStore[Namespace] | None,
) -> tuple[ResolvedTerm, ...]:
    return tuple(resolve(t, owner_namespace, namespaces) for t in terms)


def existing_terms_match_all(
    terms: Sequence[PodAffinityTerm], owner_namespace: str, pod: Pod
) -> bool:
    """podMatchesAllAffinityTerms for unresolved terms (queueing hints: no namespace labels)."""
    return bool(terms) and all(term_matches(t, owner_namespace, pod, _NO_LABELS) for t in terms)
