"""Decode one entry of `profiles` into a resolved Profile.

A profile is a scheduler name, an optional percentageOfNodesToScore, a `plugins` section
(merged onto the defaults and expanded by plugin_sets) and a pluginConfig list (args built
by plugin_config). Problems are collected; a profile with problems is still returned, as
far as it could be built, so that cross-profile checks can run and report too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asched.config.compat import (
    POINT_SPELLINGS,
    UNSUPPORTED_POINTS,
    capitalised_points_warning,
)
from asched.config.errors import Problems, child, index
from asched.config.fields import Fields
from asched.config.model import Profile
from asched.config.plugin_config import build_plugin_args, decode_plugin_config, parse_entries
from asched.config.plugin_sets import PluginEntry, PluginSetConfig, resolve_plugins
from asched.framework.registry import Registry


@dataclass(frozen=True, slots=True)
class DecodedProfile:
    profile: Profile
    path: str
    queue_sort_path: str  # in the file's spelling, for the cross-profile check


def check_percentage(value: int | None, path: str, problems: Problems) -> None:
    if value is not None and not 0 <= value <= 100:
        problems.error(path, f"{value} is not in the valid range [0-100]")


def decode_profile(
    raw: Any,
    path: str,
    registry: Registry,
    problems: Problems,
    *,
    shared_args: Mapping[str, Any],
    default_name: str | None,
) -> DecodedProfile | None:
    fields = Fields.of(raw, path, problems)
    if fields is None:
        return None

    # kube-scheduler names the profile only when it is the only one and has no name.
    if fields.raw("schedulerName") is None and default_name is not None:
        name = default_name
    else:
        name = fields.text("schedulerName")
        if not name:
            problems.error(fields.at("schedulerName"), "required value")

    percentage = fields.optional_integer("percentageOfNodesToScore")
    check_percentage(percentage, fields.at("percentageOfNodesToScore"), problems)
    if fields.raw("percentageOfPlacementsToScore") is not None:
        fields.error(
            "percentageOfPlacementsToScore",
            "not supported by asched (pod-group placement scheduling)",
        )

    plugins_path = fields.at("plugins")
    sets = _plugin_sets(fields.mapping("plugins"), plugins_path, problems)
    entries = decode_plugin_config(
        fields.array("pluginConfig"), fields.at("pluginConfig"), problems
    )
    fields.finish()

    resolved = resolve_plugins(sets, registry, problems, plugins_path)
    own_args = parse_entries(entries, registry, problems)
    args = build_plugin_args(
        resolved.used, registry, problems, own=own_args, shared=shared_args, profile_path=path
    )
    queue_sort = sets.get("queueSort")
    return DecodedProfile(
        Profile(name, resolved.points, args, percentage),
        path,
        queue_sort.path if queue_sort else child(plugins_path, "queueSort"),
    )


def _plugin_sets(
    plugins: Fields | None, path: str, problems: Problems
) -> dict[str, PluginSetConfig]:
    """The sets the file wrote, keyed by camelCase point name."""
    if plugins is None:
        return {}
    sets: dict[str, PluginSetConfig] = {}
    first_spelling: dict[str, str] = {}
    capitalised: list[tuple[str, str]] = []
    for key in plugins.names():
        if not isinstance(key, str):
            continue  # finish() reports it
        if key in UNSUPPORTED_POINTS:
            if plugins.raw(key):
                plugins.error(
                    key, "extension point not supported by asched (pod-group placement scheduling)"
                )
            continue
        point = POINT_SPELLINGS.get(key)
        if point is None:
            continue  # finish() reports it as unknown
        raw = plugins.raw(key)
        if point in first_spelling:
            plugins.error(key, f"the same extension point as {first_spelling[point]}")
            continue
        first_spelling[point] = key
        if key != point:
            capitalised.append((key, point))
        sets[point] = _plugin_set(raw, plugins.at(key), problems)
    if capitalised:
        problems.warn(path, capitalised_points_warning(capitalised))
    plugins.finish()
    return sets


def _plugin_set(raw: Any, path: str, problems: Problems) -> PluginSetConfig:
    if raw is None:
        return PluginSetConfig(path)
    fields = Fields.of(raw, path, problems)
    if fields is None:
        return PluginSetConfig(path)
    enabled_path = fields.at("enabled")
    enabled = tuple(
        entry
        for i, item in enumerate(fields.array("enabled"))
        if (entry := _plugin_entry(item, index(enabled_path, i), problems)) is not None
    )
    disabled_path = fields.at("disabled")
    disabled = frozenset(
        entry.name
        for i, item in enumerate(fields.array("disabled"))
        if (entry := _plugin_entry(item, index(disabled_path, i), problems)) is not None
    )
    fields.finish()
    return PluginSetConfig(path, enabled, disabled)


def _plugin_entry(raw: Any, path: str, problems: Problems) -> PluginEntry | None:
    fields = Fields.of(raw, path, problems)
    if fields is None:
        return None
    name = fields.text("name")
    weight = fields.optional_integer("weight")
    fields.finish()
    if not name:
        problems.error(fields.at("name"), "required value")
        return None
    return PluginEntry(name, weight, path)
