"""Object metadata shared by every decoded kind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(slots=True, frozen=True)
class OwnerRef:
    kind: str
    name: str
    uid: str
    controller: bool


def parse_time(raw: Any) -> float:
    """RFC 3339 timestamp to epoch seconds; 0.0 when absent."""
    if not raw:
        return 0.0
    return datetime.fromisoformat(str(raw)).timestamp()


def rfc3339(wall: float) -> str:
    """metav1.Time's wire format: RFC 3339 in whole seconds, UTC."""
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(wall: float) -> str:
    """metav1.MicroTime's wire format: RFC 3339 with microseconds, UTC."""
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def str_map(raw: Any, path: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    for k, v in raw.items():
        if not isinstance(v, str):
            raise ValueError(f"{path}.{k}: expected a string")
    return raw


def owner_refs(raw: Any) -> tuple[OwnerRef, ...]:
    return tuple(
        OwnerRef(
            str(o.get("kind", "")),
            str(o.get("name", "")),
            str(o.get("uid", "")),
            bool(o.get("controller", False)),
        )
        for o in raw or ()
    )
