"""The scheduler's view of a Node, decoded once per resourceVersion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.api.errors import DecodeError
from asched.api.meta import str_map
from asched.api.resources import Resource


@dataclass(slots=True, frozen=True)
class Taint:
    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute

    def __str__(self) -> str:
        # kube-scheduler's untolerated-taint reason prints {key: value}.
        return f"{{{self.key}: {self.value}}}"


@dataclass(slots=True, frozen=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(slots=True)
class Node:
    name: str
    uid: str = ""
    resource_version: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Resource = field(default_factory=Resource)
    images: tuple[ContainerImage, ...] = ()
    ready: bool = False
    # status.declaredFeatures, as listed (NodeDeclaredFeatures).
    declared_features: tuple[str, ...] = ()


def decode_node(raw: dict[str, Any]) -> Node:
    """Decode a core/v1 Node; raises DecodeError naming the node and the field."""
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    name = str(meta.get("name") or "")
    try:
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or ()
        )
        return Node(
            name=name,
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            labels=str_map(meta.get("labels"), "metadata.labels"),
            annotations=str_map(meta.get("annotations"), "metadata.annotations"),
            taints=tuple(
                Taint(
                    str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or "")
                )
                for t in spec.get("taints") or ()
            ),
            unschedulable=bool(spec.get("unschedulable", False)),
            allocatable=Resource.from_list(status.get("allocatable") or {}, "status.allocatable"),
            images=tuple(
                ContainerImage(tuple(i.get("names") or ()), int(i.get("sizeBytes") or 0))
                for i in status.get("images") or ()
            ),
            ready=ready,
            declared_features=tuple(str(f) for f in status.get("declaredFeatures") or ()),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        msg = str(exc)
        field_path, _, detail = msg.partition(": ")
        if not detail:
            field_path, detail = "status", msg
        raise DecodeError("Node", name, field_path, detail) from None
