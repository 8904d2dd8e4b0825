"""Pod placement constraints: node affinity, pod (anti-)affinity, topology spread.

Parsed once when a pod is decoded, so Filter and Score read typed terms and never walk
JSON. Field names follow core/v1; defaults follow the API server's defaulting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asched.api.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
)


@dataclass(slots=True, frozen=True)
class PreferredSchedulingTerm:
    weight: int
    term: NodeSelectorTerm


@dataclass(slots=True, frozen=True)
class NodeAffinity:
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    topology_key: str
    namespaces: frozenset[str] = frozenset()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(slots=True, frozen=True)
class PodAffinity:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


@dataclass(slots=True, frozen=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()


def _int(raw: Any, path: str) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise ValueError(f"{path}: expected an integer, got {raw!r}")
    return raw


def _str_list(raw: Any, path: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ValueError(f"{path}: expected a list of strings")
    return tuple(raw)


def parse_pod_affinity_term(raw: Any, path: str) -> PodAffinityTerm:
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise ValueError(f"{path}.topologyKey: required")
    return PodAffinityTerm(
        label_selector=parse_label_selector(raw.get("labelSelector"), f"{path}.labelSelector"),
        topology_key=key,
        namespaces=frozenset(_str_list(raw.get("namespaces"), f"{path}.namespaces")),
        namespace_selector=parse_label_selector(
            raw.get("namespaceSelector"), f"{path}.namespaceSelector"
        ),
        match_label_keys=_str_list(raw.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
        mismatch_label_keys=_str_list(raw.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"),
    )


def _parse_pod_affinity(raw: Any, path: str) -> PodAffinity | None:
    if raw is None:
        return None
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        parse_pod_affinity_term(t, f"{path}.{req_key}[{i}]")
        for i, t in enumerate(raw.get(req_key) or [])
    )
    preferred = tuple(
        WeightedPodAffinityTerm(
            _int(t.get("weight"), f"{path}.{pref_key}[{i}].weight"),
            parse_pod_affinity_term(
                t.get("podAffinityTerm"), f"{path}.{pref_key}[{i}].podAffinityTerm"
            ),
        )
        for i, t in enumerate(raw.get(pref_key) or [])
    )
    return PodAffinity(required, preferred)


def parse_affinity(raw: Any, path: str) -> Affinity | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    node_aff: NodeAffinity | None = None
    na = raw.get("nodeAffinity")
    if na is not None:
        p = f"{path}.nodeAffinity"
        pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
        node_aff = NodeAffinity(
            required=parse_node_selector(
                na.get("requiredDuringSchedulingIgnoredDuringExecution"),
                f"{p}.requiredDuringSchedulingIgnoredDuringExecution",
            ),
            preferred=tuple(
                PreferredSchedulingTerm(
                    _int(t.get("weight"), f"{p}.{pref_key}[{i}].weight"),
                    parse_node_selector_term(
                        t.get("preference"), f"{p}.{pref_key}[{i}].preference"
                    ),
                )
                for i, t in enumerate(na.get(pref_key) or [])
            ),
        )
    return Affinity(
        node_affinity=node_aff,
        pod_affinity=_parse_pod_affinity(raw.get("podAffinity"), f"{path}.podAffinity"),
        pod_anti_affinity=_parse_pod_affinity(
            raw.get("podAntiAffinity"), f"{path}.podAntiAffinity"
        ),
    )


def parse_topology_spread(raw: Any, path: str) -> tuple[TopologySpreadConstraint, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list")
    out = []
    for i, c in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(c, dict):
            raise ValueError(f"{p}: expected an object")
        min_domains = c.get("minDomains")
        out.append(
            TopologySpreadConstraint(
                max_skew=_int(c.get("maxSkew"), f"{p}.maxSkew"),
                topology_key=str(c.get("topologyKey") or ""),
                when_unsatisfiable=str(c.get("whenUnsatisfiable") or "DoNotSchedule"),
                label_selector=parse_label_selector(c.get("labelSelector"), f"{p}.labelSelector"),
                min_domains=None if min_domains is None else _int(min_domains, f"{p}.minDomains"),
                node_affinity_policy=str(c.get("nodeAffinityPolicy") or "Honor"),
                node_taints_policy=str(c.get("nodeTaintsPolicy") or "Ignore"),
                match_label_keys=_str_list(c.get("matchLabelKeys"), f"{p}.matchLabelKeys"),
            )
        )
    return tuple(out)
