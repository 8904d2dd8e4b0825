"""pluginConfig entries: decode them, then build each plugin's validated args object.

kube-scheduler gives every enabled plugin that has an args type a defaulted args object,
even when pluginConfig does not mention it (v1 `setDefaults_KubeSchedulerProfile`), and
validates the args of every entry, enabled or not. Here the plugin's own Args type does
both (`PluginSpec.parse_args(raw or None, path)`); its ArgsError, which names the field
inside the args, becomes a config problem at that path. Names must be unique per list and
must name a registered plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from asched.config.compat import GROUP
from asched.config.errors import Problems, child, index
from asched.config.fields import Fields, type_name
from asched.framework.registry import ArgsError, PluginSpec, Registry, UnknownPluginError


@dataclass(frozen=True, slots=True)
class PluginConfigEntry:
    name: str
    args: Mapping[str, Any] | None
    path: str  # of the entry: `profiles[0].pluginConfig[1]`


def decode_plugin_config(
    items: list[Any], path: str, problems: Problems
) -> list[PluginConfigEntry]:
    """The entries of one pluginConfig list; duplicates and malformed entries are reported."""
    entries: list[PluginConfigEntry] = []
    seen: dict[str, str] = {}
    for i, item in enumerate(items):
        entry_path = index(path, i)
        fields = Fields.of(item, entry_path, problems)
        if fields is None:
            continue
        name = fields.text("name")
        args = _args_body(fields, name, problems)
        fields.finish()
        if not name:
            problems.error(fields.at("name"), "required value")
            continue
        if name in seen:
            problems.error(
                fields.at("name"), f'duplicate entry for plugin "{name}" (first at {seen[name]})'
            )
            continue
        seen[name] = entry_path
        entries.append(PluginConfigEntry(name, args, entry_path))
    return entries


def _args_body(entry: Fields, name: str, problems: Problems) -> Mapping[str, Any] | None:
    """The args mapping minus its optional TypeMeta, which kube-scheduler also accepts."""
    raw = entry.raw("args")
    path = entry.at("args")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.error(path, f"must be an object, got {type_name(raw)}")
        return None
    body = dict(raw)
    kind = body.pop("kind", None)
    api_version = body.pop("apiVersion", None)
    # Out-of-tree `module:attr` names have no conventional kind to compare with.
    if kind is not None and ":" not in name and kind != f"{name}Args":
        problems.error(child(path, "kind"), f'must be "{name}Args" for plugin "{name}"')
    if api_version is not None and not (
        isinstance(api_version, str) and api_version.startswith(f"{GROUP}/")
    ):
        problems.error(child(path, "apiVersion"), f"must be a {GROUP} version")
    return body


def lookup(registry: Registry, entry: PluginConfigEntry, problems: Problems) -> PluginSpec | None:
    try:
        return registry.get(entry.name)
    except UnknownPluginError:
        problems.error(child(entry.path, "name"), f'unknown plugin "{entry.name}"')
    except (TypeError, ValueError) as exc:
        problems.error(child(entry.path, "name"), f'cannot load plugin "{entry.name}": {exc}')
    return None


def parse_args(
    spec: PluginSpec, raw: Mapping[str, Any] | None, path: str, problems: Problems
) -> tuple[bool, Any]:
    """(True, the plugin's args object), or (False, None) after reporting the problem."""
    try:
        return True, spec.parse_args(raw, path)
    except ArgsError as exc:
        problems.error(exc.path or path, exc.message)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        # A plugin's from_dict should raise ArgsError; anything else still names the args.
        problems.error(path, f"invalid args for plugin {spec.name}: {exc}")
    return False, None


def parse_entries(
    entries: Sequence[PluginConfigEntry], registry: Registry, problems: Problems
) -> dict[str, Any]:
    """Validate every entry (used or not); returns name -> args object for the valid ones."""
    parsed: dict[str, Any] = {}
    for entry in entries:
        spec = lookup(registry, entry, problems)
        if spec is None:
            continue
        ok, args = parse_args(spec, entry.args, child(entry.path, "args"), problems)
        if ok:
            parsed[entry.name] = args
    return parsed


def build_plugin_args(
    used: Sequence[str],
    registry: Registry,
    problems: Problems,
    *,
    own: Mapping[str, Any],
    shared: Mapping[str, Any],
    profile_path: str,
) -> dict[str, Any]:
    """Args for every used plugin: the profile's entry, else the shared one, else defaults."""
    args: dict[str, Any] = {}
    for name in used:
        if name in own:
            args[name] = own[name]
        elif name in shared:
            args[name] = shared[name]
        else:
            # No entry: the Args type's defaults; the path names the missing entry.
            path = f"{child(profile_path, 'pluginConfig')}[name={name}].args"
            ok, value = parse_args(registry.get(name), None, path, problems)
            if ok:
                args[name] = value
    return args
