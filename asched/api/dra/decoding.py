"""Shared decoding helpers of the resource.k8s.io objects: field access with the field's
path in every error, and DecodeError naming the object."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

from asched.api.errors import DecodeError
from asched.api.quantity import QuantityError, parse_quantity_exact

T = TypeVar("T")


def decoding(kind: str, key: str, build: Callable[[], T]) -> T:
    """Run `build`, turning its ValueError("path: detail") into a DecodeError for `kind`."""
    try:
        return build()
    except (ValueError, TypeError, AttributeError) as exc:
        msg = str(exc)
        field_path, _, detail = msg.partition(": ")
        if not detail:
            field_path, detail = "spec", msg
        raise DecodeError(kind, key, field_path, detail) from None


def obj(raw: Any, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected an object")
    return raw


def list_of(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list")
    return raw


def text(raw: Any, key: str, path: str) -> str:
    """An optional string field of the object at *path*."""
    value = obj(raw, path).get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{path}.{key}: expected a string, got {value!r}")
    return value


def strings(raw: Any, path: str) -> tuple[str, ...]:
    items = list_of(raw, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{path}[{i}]: expected a string, got {item!r}")
    return tuple(items)


def exact(raw: Any, path: str) -> Fraction:
    try:
        return parse_quantity_exact(str(raw))
    except QuantityError as exc:
        raise ValueError(f"{path}: {exc}") from None


def optional_int(raw: Any, key: str, path: str) -> int | None:
    value = obj(raw, path).get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}.{key}: expected an integer, got {value!r}")
    return value


def selectors_of(raw: Any, path: str) -> tuple[str, ...]:
    out = []
    for i, sel in enumerate(list_of(raw, path)):
        cel = obj(obj(sel, f"{path}[{i}]").get("cel"), f"{path}[{i}].cel")
        # An empty expression stays "": the allocator reports it as Go does.
        out.append(str(cel.get("expression") or ""))
    return tuple(out)
