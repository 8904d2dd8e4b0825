"""Plugin registry: names to factories (kube-scheduler framework/runtime/registry.go).

In-tree plugins are registered in asched.plugins.registry; out-of-tree plugins arrive as
ordinary Python packages through the entry-point group `asched.plugins` (each entry point
names a PluginSpec), or by a `module:attribute` import path used as the plugin name in the
config. Duplicate names are an error.

Every plugin module has the same shape: NAME, an Args dataclass with defaults and
`from_dict(raw, path)` validation (raising ArgsError naming the field path), the plugin
class, and a PluginSpec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, Self

from asched.framework.handle import Handle
from asched.framework.interfaces import Plugin
from asched.framework.points import ExtensionPoint

ENTRY_POINT_GROUP = "asched.plugins"


class ArgsError(ValueError):
    """Invalid plugin args; `path` is the field path inside the config."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


class DuplicatePluginError(ValueError):
    pass


class UnknownPluginError(KeyError):
    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        super().__init__(f"unknown plugin {name!r}; known plugins: {', '.join(sorted(known))}")

    def __str__(self) -> str:
        return str(self.args[0])


class PluginArgs(Protocol):
    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        """Parse and validate; unknown fields and bad values raise ArgsError(path...)."""
        ...


# Extension point (config name) -> the method a plugin class defines for it.
POINT_METHODS: dict[str, str] = {point.value: point.method for point in ExtensionPoint}


@dataclass(frozen=True)
class PluginSpec:
    """How to build a plugin: `plugin_type(args, handle)` unless a factory is given."""

    name: str
    plugin_type: type
    args_type: type[PluginArgs] | None = None
    factory: Callable[[Any, Handle], Plugin] | None = None

    def extension_points(self) -> frozenset[str]:
        """The points the plugin class implements (used to expand multiPoint)."""
        return frozenset(
            point
            for point, method in POINT_METHODS.items()
            if callable(getattr(self.plugin_type, method, None))
        )

    def new(self, args: Any, handle: Handle) -> Plugin:
        if self.factory is not None:
            return self.factory(args, handle)
        plugin: Plugin = self.plugin_type(args, handle)
        return plugin

    def parse_args(self, raw: Mapping[str, Any] | None, path: str) -> Any:
        if self.args_type is None:
            if raw:
                raise ArgsError(path, f"plugin {self.name} takes no args")
            return None
        return self.args_type.from_dict(raw or {}, path)


class Registry:
    def __init__(self, specs: Mapping[str, PluginSpec] | None = None) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for spec in (specs or {}).values():
            self.register(spec)

    def register(self, spec: PluginSpec) -> None:
        if spec.name in self._specs:
            raise DuplicatePluginError(f"a plugin named {spec.name!r} is already registered")
        self._specs[spec.name] = spec

    def merge(self, other: Registry) -> None:
        for spec in other:
            self.register(spec)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[PluginSpec]:
        return iter(self._specs.values())

    def names(self) -> list[str]:
        return sorted(self._specs)

    def get(self, name: str) -> PluginSpec:
        """Look up by name; a `module:attr` name is imported and registered on first use."""
        spec = self._specs.get(name)
        if spec is not None:
            return spec
        if ":" in name:
            spec = load_import_path(name)
            self._specs[name] = spec
            return spec
        raise UnknownPluginError(name, list(self._specs))

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        for ep in entry_points(group=group):
            obj = ep.load()
            spec = _as_spec(obj, ep.name)
            if spec.name != ep.name:
                raise ValueError(
                    f"entry point {ep.name!r} in group {group!r} names plugin {spec.name!r}"
                )
            self.register(spec)


def _as_spec(obj: object, where: str) -> PluginSpec:
    if isinstance(obj, PluginSpec):
        return obj
    spec = getattr(obj, "SPEC", None) or getattr(obj, "PLUGIN", None)
    if isinstance(spec, PluginSpec):
        return spec
    raise TypeError(f"{where}: expected a PluginSpec (or a module with SPEC), got {type(obj)!r}")


def import_spec(path: str) -> PluginSpec:
    """Import `package.module:ATTR` and return the PluginSpec it names."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
        obj = getattr(module, attr) if attr else module
    except (ImportError, AttributeError) as exc:
        raise UnknownPluginError(path, []) from exc
    return _as_spec(obj, path)


def load_import_path(path: str) -> PluginSpec:
    """A plugin named by its import path in a config: the spec keeps the path as its name."""
    spec = import_spec(path)
    return PluginSpec(path, spec.plugin_type, spec.args_type, spec.factory)
