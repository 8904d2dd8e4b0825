"""Label selectors (metav1.LabelSelector) and node selectors (v1.NodeSelector), parsed once.

Matching follows apimachinery's labels.Selector and component-helpers' nodeaffinity:
an empty LabelSelector matches everything, an absent one (None) matches nothing; a
NodeSelectorTerm with no requirements matches nothing; terms are ORed, requirements ANDed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"
# The one field a NodeSelectorTerm's matchFields may name.
METADATA_NAME = "metadata.name"
_LABEL_OPS = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST})
_NODE_OPS = _LABEL_OPS | {GT, LT}


@dataclass(slots=True, frozen=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str] = frozenset()
    # The values as the object listed them, for writing the requirement back unchanged
    # (DRA copies a ResourceSlice's node selector into the allocation); not part of
    # equality, which is by set as apimachinery's comparisons are.
    listed: tuple[str, ...] = field(default=(), compare=False)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == IN:
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == NOT_IN:
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        v = labels.get(self.key)
        if v is None or len(self.values) != 1:
            return False
        have, want = parse_int64(v), parse_int64(next(iter(self.values)))
        if have is None or want is None:
            return False
        return have > want if op == GT else have < want


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def parse_int64(s: str) -> int | None:
    """Go's strconv.ParseInt(s, 10, 64), or None where it fails (labels.Requirement.Matches).

    Stricter than int(): an optional sign then ASCII digits only - no spaces, underscores
    or other scripts' digits - and within int64.
    """
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def gt_lt_value_errors(req: Requirement, path: str) -> list[str]:
    """The parse errors labels.NewRequirement reports for a Gt/Lt requirement at *path*.

    Each value ParseInt rejects is an error worded as apimachinery's field.Invalid on
    `<path>.values[i]` prints it. Other operators give none (the API server's validation
    already refused what NewRequirement would refuse there).
    """
    if req.operator not in (GT, LT):
        return []
    return [
        f"{path}.values[{i}]: Invalid value: {_go_quote(v)}: "
        "for 'Gt', 'Lt' operators, the value must be an integer"
        for i, v in enumerate(sorted(req.values))
        if parse_int64(v) is None
    ]


def _go_quote(s: str) -> str:
    """Go's %q for the printable ASCII a label value is made of."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def go_aggregate(messages: list[str]) -> str:
    """apimachinery's utilerrors Aggregate.Error(): one message alone, several
    deduplicated in order as "[m1, m2]"."""
    seen = list(dict.fromkeys(messages))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """A parsed metav1.LabelSelector; `requirements` includes matchLabels."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def is_empty(self) -> bool:
        return not self.requirements


@dataclass(slots=True, frozen=True)
class NodeSelectorTerm:
    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        if not self.match_fields:
            return True
        fields = {METADATA_NAME: node_name}
        return all(r.matches(fields) for r in self.match_fields)


@dataclass(slots=True, frozen=True)
class NodeSelector:
    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)


def _requirement(raw: Any, path: str, ops: frozenset[str]) -> Requirement:
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    key, op = raw.get("key"), raw.get("operator")
    if not isinstance(key, str) or not key:
        raise ValueError(f"{path}.key: required")
    if op not in ops:
        raise ValueError(f"{path}.operator: {op!r} is not one of {sorted(ops)}")
    values = raw.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"{path}.values: expected a list of strings")
    return Requirement(key, op, frozenset(values), tuple(values))


def parse_label_selector(raw: Any, path: str) -> LabelSelector | None:
    """None for an absent selector (matches nothing where the API says so)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    reqs: list[Requirement] = []
    for k, v in sorted((raw.get("matchLabels") or {}).items()):
        if not isinstance(v, str):
            raise ValueError(f"{path}.matchLabels.{k}: expected a string")
        reqs.append(Requirement(k, IN, frozenset((v,))))
    for i, e in enumerate(raw.get("matchExpressions") or []):
        reqs.append(_requirement(e, f"{path}.matchExpressions[{i}]", _LABEL_OPS))
    return LabelSelector(tuple(reqs))


def parse_node_selector_term(raw: Any, path: str) -> NodeSelectorTerm:
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    exprs = tuple(
        _requirement(e, f"{path}.matchExpressions[{i}]", _NODE_OPS)
        for i, e in enumerate(raw.get("matchExpressions") or [])
    )
    fields = tuple(
        _requirement(e, f"{path}.matchFields[{i}]", _NODE_OPS)
        for i, e in enumerate(raw.get("matchFields") or [])
    )
    return NodeSelectorTerm(exprs, fields)


def parse_node_selector(raw: Any, path: str) -> NodeSelector | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    terms = raw.get("nodeSelectorTerms") or []
    return NodeSelector(
        tuple(
            parse_node_selector_term(t, f"{path}.nodeSelectorTerms[{i}]")
            for i, t in enumerate(terms)
        )
    )


def requirement_json(r: Requirement) -> dict[str, Any]:
    """A NodeSelectorRequirement as the API stores it: values in the order they were
    listed (sorted when the requirement was built in code), omitted when empty."""
    out: dict[str, Any] = {"key": r.key, "operator": r.operator}
    values = list(r.listed) if r.listed else sorted(r.values)
    if values:
        out["values"] = values
    return out


def node_selector_json(selector: NodeSelector) -> dict[str, Any]:
    """A v1.NodeSelector as the API stores it (empty lists omitted, as Go's omitempty)."""
    terms: list[dict[str, Any]] = []
    for t in selector.terms:
        term: dict[str, Any] = {}
        if t.match_expressions:
            term["matchExpressions"] = [requirement_json(r) for r in t.match_expressions]
        if t.match_fields:
            term["matchFields"] = [requirement_json(r) for r in t.match_fields]
        terms.append(term)
    return {"nodeSelectorTerms": terms}


LabelMatcher = Callable[[Mapping[str, str]], bool]


def match_nothing(labels: Mapping[str, str]) -> bool:
    return False


def compile_selector(selector: LabelSelector | None) -> LabelMatcher:
    """A fast predicate equivalent to `selector.matches` (None matches nothing).

    Counting walks every pod of the cluster each cycle, and most selectors are plain
    matchLabels: those become direct dict comparisons instead of generic requirements.
    """
    if selector is None:
        return match_nothing
    reqs = selector.requirements
    if not all(r.operator == IN and len(r.values) == 1 for r in reqs):
        return selector.matches
    pairs = tuple((r.key, next(iter(r.values))) for r in reqs)
    if len(pairs) == 1:
        ((key, value),) = pairs
        return lambda labels: labels.get(key) == value
    return lambda labels: all(labels.get(k) == v for k, v in pairs)
