"""Args readers the policies share, on top of asched's own (asched.plugins.helpers).

Why: several policies take a label key, a resource name or a bounded integer, and each
must be validated the same way with the same messages. Like asched's readers, every one
raises asched.framework.ArgsError naming the full field path
(`profiles[0].pluginConfig[2].args.labelKey`), so a bad config points at the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asched.framework import ArgsError
from asched.plugins.helpers import (
    field_path,
    is_extended_resource_name,
    label_name_error,
    read_int,
    read_str,
)

_NATIVE_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_HUGEPAGES_PREFIX = "hugepages-"


def read_key(raw: Mapping[str, Any], name: str, path: str, default: str) -> str:
    """A label or annotation key (both follow apimachinery's qualified-name rule)."""
    key = read_str(raw, name, path, default)
    problem = label_name_error(key)
    if problem:
        raise ArgsError(field_path(path, name), f'Invalid value: "{key}": {problem}')
    return key


def read_bounded_int(
    raw: Mapping[str, Any],
    name: str,
    path: str,
    default: int,
    *,
    low: int,
    high: int | None = None,
) -> int:
    value = read_int(raw, name, path, default)
    if value < low or (high is not None and value > high):
        bound = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ArgsError(field_path(path, name), f"Invalid value: {value}: must be {bound}")
    return value


def read_resource(
    raw: Mapping[str, Any], name: str, path: str, default: str, *, extended_only: bool = False
) -> str:
    """cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource name."""
    resource = read_str(raw, name, path, default)
    if is_extended_resource_name(resource):
        return resource
    if not extended_only and (
        resource in _NATIVE_RESOURCES or resource.startswith(_HUGEPAGES_PREFIX)
    ):
        return resource
    wanted = (
        "an extended resource name (<domain>/<name>)"
        if extended_only
        else '"cpu", "memory", "ephemeral-storage", hugepages-<size> or an extended '
        "resource name (<domain>/<name>)"
    )
    raise ArgsError(field_path(path, name), f'Unsupported value: "{resource}": want {wanted}')


def read_choice(
    raw: Mapping[str, Any], name: str, path: str, default: str, choices: tuple[str, ...]
) -> str:
    value = read_str(raw, name, path, default)
    if value not in choices:
        supported = ", ".join(f'"{c}"' for c in choices)
        raise ArgsError(
            field_path(path, name), f'Unsupported value: "{value}": supported values: {supported}'
        )
    return value
