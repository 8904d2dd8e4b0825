"""Namespace labels, for pod affinity terms with a namespaceSelector.

The plugin asks the scheduler to watch namespaces; each is decoded into its name and
labels only. A namespace the store does not know has no labels (upstream
GetNamespaceLabelsSnapshot logs and assumes an empty set).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from asched.api import DecodeError
from asched.api.meta import str_map
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest, ObjectStore

_NO_LABELS: Mapping[str, str] = {}


@dataclass(slots=True, frozen=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


def decode_namespace(raw: dict[str, Any]) -> Namespace:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")
    try:
        return Namespace(name, str_map(meta.get("labels"), "metadata.labels"))
    except ValueError as exc:
        field_path, _, detail = str(exc).partition(": ")
        raise DecodeError("Namespace", name, field_path, detail or str(exc)) from None


NAMESPACES: InformerRequest[Namespace] = InformerRequest(
    "namespaces/v1", "/api/v1/namespaces", decode_namespace, EventResource.NAMESPACE
)


def namespace_labels(store: ObjectStore[Namespace], name: str) -> Mapping[str, str]:
    ns = store.get(name)
    return ns.labels if ns is not None else _NO_LABELS
