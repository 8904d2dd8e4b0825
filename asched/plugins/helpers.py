"""Small helpers the in-tree plugins share: args parsing, score normalization, taints.

Why here: kube-scheduler keeps the same pieces in plugins/helper (DefaultNormalizeScore,
the taint filter functions) and in component-helpers (toleration matching); several of
our plugins need them, and each must behave the same everywhere.

Guarantees:
- Args readers raise ArgsError naming the full field path (`<path>.<field>[i]`), and
  `check_fields` rejects unknown fields, so every plugin's `from_dict` is strict.
- `go_div` divides like Go's integer `/` (truncates toward zero), which the score
  formulas we mirror rely on when an intermediate value can be negative.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from asched.api import Node, Pod, Taint, Toleration
from asched.framework.columns import Int64s
from asched.framework.registry import ArgsError
from asched.framework.types import NodeScore

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
# The effects Filter must respect (kube-scheduler helper.DoNotScheduleTaintsFilterFunc).
DO_NOT_SCHEDULE_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


# --- args parsing -------------------------------------------------------------------


def field_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def check_fields(raw: Mapping[str, Any], allowed: Iterable[str], path: str) -> None:
    """Unknown fields are errors (kube-scheduler decodes plugin args strictly)."""
    if not isinstance(raw, Mapping):
        raise ArgsError(path, f"must be an object, got {type(raw).__name__}")
    known = set(allowed)
    for key in raw:
        if key not in known:
            raise ArgsError(field_path(path, str(key)), "unknown field")


def read_int(raw: Mapping[str, Any], name: str, path: str, default: int) -> int:
    value = raw.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgsError(field_path(path, name), f"must be an integer, got {value!r}")
    return value


def read_str(raw: Mapping[str, Any], name: str, path: str, default: str = "") -> str:
    value = raw.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ArgsError(field_path(path, name), f"must be a string, got {value!r}")
    return value


def read_list(raw: Mapping[str, Any], name: str, path: str) -> list[Any]:
    value = raw.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ArgsError(field_path(path, name), f"must be a list, got {type(value).__name__}")
    return value


def read_mapping(raw: Mapping[str, Any], name: str, path: str) -> Mapping[str, Any] | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ArgsError(field_path(path, name), f"must be an object, got {type(value).__name__}")
    return value


def read_str_list(raw: Mapping[str, Any], name: str, path: str) -> tuple[str, ...]:
    items = read_list(raw, name, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ArgsError(f"{field_path(path, name)}[{i}]", f"must be a string, got {item!r}")
    return tuple(items)


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_name_error(value: str) -> str | None:
    """apimachinery IsQualifiedName, the rule ValidateLabelName applies; None when valid."""
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (at most 63 characters)"
        )
    return None


# --- arithmetic ---------------------------------------------------------------------


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's `/` on int64."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """Scale [0, max(scores)] to [0, max_priority], optionally reversed, in place.

    kube-scheduler helper.DefaultNormalizeScore: when every score is 0, reversed scores
    all become max_priority and plain ones stay 0.
    """
    max_count = 0
    for s in scores:
        max_count = max(max_count, s.score)
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = max_priority * s.score // max_count
        s.score = max_priority - score if reverse else score


def default_normalize_scores(max_priority: int, reverse: bool, scores: Int64s) -> Int64s:
    """default_normalize_score over an array (a new array; the input is not changed)."""
    max_count = max(0, int(scores.max())) if scores.size else 0
    if max_count == 0:
        if reverse:
            return np.full(len(scores), max_priority, dtype=np.int64)
        return scores.copy()
    scaled = max_priority * scores // max_count
    out: Int64s = max_priority - scaled if reverse else scaled
    return out


# --- taints and tolerations ---------------------------------------------------------


def tolerations_tolerate(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """component-helpers TolerationsTolerateTaint."""
    key, value, effect = taint.key, taint.value, taint.effect
    return any(t.tolerates(key, value, effect) for t in tolerations)


def find_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: frozenset[str]
) -> Taint | None:
    """The first taint with one of `effects` no toleration tolerates.

    component-helpers FindMatchingUntoleratedTaint; taints are checked in node order.
    """
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate(tolerations, taint):
            return taint
    return None


# --- resources and images -----------------------------------------------------------


def is_extended_resource_name(name: str) -> bool:
    """core/v1 helper IsExtendedResourceName: a domain-prefixed name outside kubernetes.io.

    Skips the qualified-name syntax check: names reaching here were accepted by the API.
    """
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def normalized_image_name(name: str) -> str:
    """The CRI name for a pod's image: `:latest` appended when no tag is given."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


# --- queueing-hint object checks ----------------------------------------------------


def as_node(obj: object | None) -> Node | None:
    return obj if isinstance(obj, Node) else None


def as_pod(obj: object | None) -> Pod | None:
    return obj if isinstance(obj, Pod) else None
