"""NodeAffinityArgs: kube-scheduler's addedAffinity plus the seed article's label pair.

- `addedAffinity` (v1.NodeAffinity) is applied to every pod of the profile, validated as
  ValidateNodeAffinityArgs does (component-helpers nodeaffinity.NewNodeSelector /
  NewPreferredSchedulingTerms with field paths): operators and their value counts, Gt/Lt
  integers, matchFields only on `metadata.name` with one value, valid label keys.
- `labelKey` / `labelValue` come from the article asched grows from (a NodeAffinity
  plugin that only accepts nodes labelled `labelKey=labelValue`); they must be set
  together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from asched.api.affinity import NodeAffinity, PreferredSchedulingTerm
from asched.api.labels import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    parse_node_selector,
    parse_node_selector_term,
)
from asched.framework.registry import ArgsError
from asched.plugins.helpers import (
    check_fields,
    field_path,
    label_name_error,
    read_int,
    read_list,
    read_mapping,
    read_str,
)

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
OBJECT_NAME_FIELD = "metadata.name"


def _api_error(exc: ValueError, fallback_path: str) -> ArgsError:
    """The API parsers raise `path: message`; keep their path."""
    where, sep, message = str(exc).partition(": ")
    return ArgsError(where, message) if sep else ArgsError(fallback_path, str(exc))


_MSG_VALUES_REQUIRED = "Required value: must be specified when `operator` is 'In' or 'NotIn'"
_MSG_VALUES_FORBIDDEN = (
    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
)
_MSG_ONE_VALUE = "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"
_MSG_ONE_FIELD_VALUE = (
    "Required value: must be only one value when `operator` is 'In' or 'NotIn' "
    "for node field selector"
)


def _check_expression(req: Requirement, path: str) -> None:
    problem = label_name_error(req.key)
    if problem:
        raise ArgsError(field_path(path, "key"), f'Invalid value: "{req.key}": {problem}')
    op, n = req.operator, len(req.values)
    values_path = field_path(path, "values")
    if op in (IN, NOT_IN) and n == 0:
        raise ArgsError(values_path, _MSG_VALUES_REQUIRED)
    if op in (EXISTS, DOES_NOT_EXIST) and n:
        raise ArgsError(values_path, _MSG_VALUES_FORBIDDEN)
    if op in (GT, LT):
        if n != 1:
            raise ArgsError(values_path, _MSG_ONE_VALUE)
        value = next(iter(req.values))
        try:
            int(value)
        except ValueError:
            raise ArgsError(
                f"{values_path}[0]", f'Invalid value: "{value}": must be an integer'
            ) from None


def _check_field(req: Requirement, path: str) -> None:
    if req.key != OBJECT_NAME_FIELD:
        raise ArgsError(
            field_path(path, "key"), f'Invalid value: "{req.key}": not a valid field selector key'
        )
    if req.operator not in (IN, NOT_IN):
        raise ArgsError(
            field_path(path, "operator"),
            f'Invalid value: "{req.operator}": not a valid selector operator',
        )
    if len(req.values) != 1:
        raise ArgsError(field_path(path, "values"), _MSG_ONE_FIELD_VALUE)


def _check_term(term: NodeSelectorTerm, path: str) -> None:
    for i, req in enumerate(term.match_expressions):
        _check_expression(req, f"{path}.matchExpressions[{i}]")
    for i, req in enumerate(term.match_fields):
        _check_field(req, f"{path}.matchFields[{i}]")


def parse_added_affinity(raw: Mapping[str, Any], path: str) -> NodeAffinity:
    check_fields(raw, (REQUIRED, PREFERRED), path)
    required: NodeSelector | None = None
    req_raw = read_mapping(raw, REQUIRED, path)
    if req_raw is not None:
        req_path = field_path(path, REQUIRED)
        check_fields(req_raw, ("nodeSelectorTerms",), req_path)
        try:
            required = parse_node_selector(req_raw, req_path)
        except ValueError as exc:
            raise _api_error(exc, req_path) from None
        for i, term in enumerate(required.terms if required else ()):
            _check_term(term, f"{req_path}.nodeSelectorTerms[{i}]")
    preferred: list[PreferredSchedulingTerm] = []
    for i, item in enumerate(read_list(raw, PREFERRED, path)):
        p = f"{field_path(path, PREFERRED)}[{i}]"
        check_fields(item, ("weight", "preference"), p)
        weight = read_int(item, "weight", p, 0)
        pref_path = field_path(p, "preference")
        try:
            term = parse_node_selector_term(item.get("preference") or {}, pref_path)
        except ValueError as exc:
            raise _api_error(exc, pref_path) from None
        _check_term(term, pref_path)
        preferred.append(PreferredSchedulingTerm(weight, term))
    return NodeAffinity(required, tuple(preferred))


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None
    label_key: str = ""
    label_value: str = ""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("addedAffinity", "labelKey", "labelValue"), path)
        added_raw = read_mapping(raw, "addedAffinity", path)
        added = (
            None
            if added_raw is None
            else parse_added_affinity(added_raw, field_path(path, "addedAffinity"))
        )
        key = read_str(raw, "labelKey", path)
        value = read_str(raw, "labelValue", path)
        if key and not value:
            raise ArgsError(
                field_path(path, "labelValue"), "Required value: must be set when labelKey is set"
            )
        if value and not key:
            raise ArgsError(
                field_path(path, "labelKey"), "Required value: must be set when labelValue is set"
            )
        if key:
            problem = label_name_error(key)
            if problem:
                raise ArgsError(field_path(path, "labelKey"), f'Invalid value: "{key}": {problem}')
        return cls(added, key, value)
