"""PodTopologySpreadArgs: parsed and validated once, when the config is loaded.

Mirrors kube-scheduler's config.PodTopologySpreadArgs with v1 defaulting
(defaultingType System when unset) and validation.ValidatePodTopologySpreadArgs: each
default constraint needs maxSkew > 0, a valid label name as topologyKey, a
whenUnsatisfiable of DoNotSchedule or ScheduleAnyway, no labelSelector (it is deduced per
pod), no repeated {topologyKey, whenUnsatisfiable}; System defaulting forbids a list.
The first problem found raises ArgsError naming the field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from asched.api.affinity import TopologySpreadConstraint
from asched.framework.registry import ArgsError

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"

# kube-scheduler's systemDefaultConstraints, used with defaultingType System.
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY, None),
    TopologySpreadConstraint(5, LABEL_ZONE, SCHEDULE_ANYWAY, None),
)

_FIELDS = frozenset({"defaultConstraints", "defaultingType", "apiVersion", "kind"})
_CONSTRAINT_FIELDS = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)
_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def label_name_error(key: str) -> str | None:
    """apimachinery ValidateLabelName (a qualified name): None when valid."""
    prefix, slash, name = key.rpartition("/")
    if slash and (
        not prefix
        or len(prefix) > 253
        or not all(_DNS_LABEL.match(part) for part in prefix.split("."))
    ):
        return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name or len(name) > 63 or not _NAME.match(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (at most 63 characters)"
        )
    return None


def _policy(raw: Any, path: str) -> str:
    if raw is None:
        return ""
    if raw not in (HONOR, IGNORE):
        raise ArgsError(path, f"unsupported value {raw!r}: supported values: Honor, Ignore")
    return str(raw)


def _constraint(raw: Any, path: str) -> TopologySpreadConstraint:
    if not isinstance(raw, Mapping):
        raise ArgsError(path, "expected an object")
    for k in raw:
        if k not in _CONSTRAINT_FIELDS:
            raise ArgsError(f"{path}.{k}", "unknown field")
    skew = raw.get("maxSkew", 0)
    if not isinstance(skew, int) or isinstance(skew, bool):
        raise ArgsError(f"{path}.maxSkew", f"expected an integer, got {skew!r}")
    if skew <= 0:
        raise ArgsError(f"{path}.maxSkew", f"{skew}: not in valid range (0, inf)")
    key = raw.get("topologyKey", "")
    if not isinstance(key, str) or not key:
        raise ArgsError(f"{path}.topologyKey", "can not be empty")
    problem = label_name_error(key)
    if problem:
        raise ArgsError(f"{path}.topologyKey", f"{key!r}: {problem}")
    when = raw.get("whenUnsatisfiable", "")
    if not when:
        raise ArgsError(f"{path}.whenUnsatisfiable", "can not be empty")
    if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise ArgsError(
            f"{path}.whenUnsatisfiable",
            f"unsupported value {when!r}: supported values: DoNotSchedule, ScheduleAnyway",
        )
    if raw.get("labelSelector") is not None:
        raise ArgsError(
            f"{path}.labelSelector",
            "constraint must not define a selector, as they deduced for each pod",
        )
    min_domains = raw.get("minDomains")
    if min_domains is not None and (
        not isinstance(min_domains, int) or isinstance(min_domains, bool) or min_domains <= 0
    ):
        raise ArgsError(f"{path}.minDomains", f"{min_domains!r}: must be greater than 0")
    keys = raw.get("matchLabelKeys") or []
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ArgsError(f"{path}.matchLabelKeys", "expected a list of strings")
    return TopologySpreadConstraint(
        max_skew=skew,
        topology_key=key,
        when_unsatisfiable=when,
        label_selector=None,
        min_domains=min_domains,
        node_affinity_policy=_policy(raw.get("nodeAffinityPolicy"), f"{path}.nodeAffinityPolicy")
        or HONOR,
        node_taints_policy=_policy(raw.get("nodeTaintsPolicy"), f"{path}.nodeTaintsPolicy")
        or IGNORE,
        match_label_keys=tuple(keys),
    )


@dataclass(frozen=True, slots=True)
class Args:
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        for k in raw:
            if k not in _FIELDS:
                raise ArgsError(f"{path}.{k}", "unknown field")
        kind = raw.get("kind")
        if kind is not None and kind != "PodTopologySpreadArgs":
            raise ArgsError(f"{path}.kind", f"expected PodTopologySpreadArgs, got {kind!r}")
        listed = raw.get("defaultConstraints")
        if listed is None:
            listed = []
        if not isinstance(listed, list):
            raise ArgsError(f"{path}.defaultConstraints", "expected a list")
        defaulting = raw.get("defaultingType") or SYSTEM_DEFAULTING
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ArgsError(
                f"{path}.defaultingType",
                f"unsupported value {defaulting!r}: supported values: System, List",
            )
        if defaulting == SYSTEM_DEFAULTING and listed:
            raise ArgsError(
                f"{path}.defaultingType", "System: invalid when .defaultConstraints are not empty"
            )
        constraints: list[TopologySpreadConstraint] = []
        seen: set[tuple[str, str]] = set()
        for i, item in enumerate(listed):
            p = f"{path}.defaultConstraints[{i}]"
            c = _constraint(item, p)
            pair = (c.topology_key, c.when_unsatisfiable)
            if pair in seen:
                raise ArgsError(p, f"duplicate value {{{pair[0]}, {pair[1]}}}")
            seen.add(pair)
            constraints.append(c)
        return cls(tuple(constraints), str(defaulting))

    def effective_defaults(self) -> tuple[TopologySpreadConstraint, ...]:
        """The constraints applied to pods that declare none of their own."""
        if self.defaulting_type == SYSTEM_DEFAULTING:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints
