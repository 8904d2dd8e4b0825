"""Turn a profile's `plugins` section into the final plugin list of each extension point.

Mirrors kube-scheduler, step by step:
1. The default plugins are one multiPoint set (v1 `getDefaultPlugins`).
2. Every set in the file is merged onto its defaults (v1 `mergePluginSet`): `disabled: "*"`
   drops all defaults of that set, a default re-listed in `enabled` is replaced in place
   (keeping its position, taking the new weight), other plugins follow the defaults.
3. multiPoint is expanded per point (runtime `expandMultiPointPlugins`): the multiPoint
   plugins implementing the point, minus those disabled there ("*" disables them all).
   Order: plugins re-listed at the point (point order), then the other multiPoint plugins,
   then the point's remaining plugins. A plugin enabled twice through multiPoint is an error.
4. Score weights (runtime `getScoreWeights`): the first of the merged score list, then the
   merged multiPoint list, that names the plugin decides its weight; 0 or unset means 1.
   Note that kube-scheduler reads a plugin re-listed at `score` without a weight as weight 0,
   hence 1, not as its multiPoint weight; we do the same.

DynamicResources is a default as in kube-scheduler 1.37 (applyDynamicResources: the
DynamicResourceAllocation gate is GA and on; inserted before DefaultPreemption, weight 2).
Not mirrored: negative weights, which kube-scheduler accepts but asched rejects (they would
invert a preference).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from asched.config.errors import Problems, child
from asched.config.fields import INT64_MAX
from asched.config.model import EXTENSION_POINTS, PluginRef
from asched.framework.registry import PluginSpec, Registry, UnknownPluginError
from asched.framework.types import MAX_NODE_SCORE

log = structlog.get_logger(__name__)

MULTI_POINT = "multiPoint"
ALL = "*"

# kube-scheduler v1 getDefaultPlugins (v1.37.2 default_plugins.go), in order; weights matter
# for score only. The order decides which plugin's reason a node that fails several gets.
DEFAULT_PLUGINS: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeName", None),
    ("NodeUnschedulable", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    # applyDynamicResources puts it right before DefaultPreemption.
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    # applyFeatureGates appends it: NodeDeclaredFeatures is GA and locked on in 1.37.
    ("NodeDeclaredFeatures", None),
    # applyGangScheduling appends it when GenericWorkload is on. asched always serves the
    # native gang API (the plugin is inert on a cluster that does not).
    ("GangScheduling", None),
    # applyTopologyAwareWorkloadScheduling appends them when TopologyAwareWorkloadScheduling
    # is on; asched always places pod groups by topology (inert for a group without a
    # topology constraint).
    ("TopologyPlacementGenerator", None),
    ("PodGroupPodsCount", 1),
)

# The points whose plugins carry a weight (getValidScoreWeights runs for both).
WEIGHTED_POINTS = ("score", "placementScore")

# Plugins v1 refuses by name (validation.go invalidPluginsByVersion).
REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})


@dataclass(frozen=True, slots=True)
class PluginEntry:
    """One `{name, weight}` item of a plugin set; `path` is where the file wrote it."""

    name: str
    weight: int | None = None
    path: str = ""


@dataclass(frozen=True, slots=True)
class PluginSetConfig:
    """A set as written in the file; `path` uses the file's spelling of the point."""

    path: str
    enabled: tuple[PluginEntry, ...] = ()
    disabled: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class ResolvedPlugins:
    """The final lists, and every plugin enabled anywhere (for building args)."""

    points: Mapping[str, tuple[PluginRef, ...]]
    used: tuple[str, ...]


def merge_plugin_set(
    defaults: Sequence[PluginEntry], custom: PluginSetConfig
) -> tuple[PluginEntry, ...]:
    """v1 mergePluginSet: the enabled list after applying `custom` to `defaults`."""
    # Go keeps the last index per name; an earlier duplicate is appended and later
    # reported as a double registration.
    custom_index = {entry.name: i for i, entry in enumerate(custom.enabled)}
    replaced: set[int] = set()
    merged: list[PluginEntry] = []
    if ALL not in custom.disabled:
        for default in defaults:
            if default.name in custom.disabled:
                continue
            i = custom_index.get(default.name)
            if i is None:
                merged.append(default)
            else:
                log.debug("default_plugin_reconfigured", plugin=default.name, set=custom.path)
                merged.append(custom.enabled[i])
                replaced.add(i)
    merged.extend(e for i, e in enumerate(custom.enabled) if i not in replaced)
    return tuple(merged)


class _Resolver:
    """Resolves one profile; problems are reported, never raised."""

    def __init__(self, registry: Registry, problems: Problems, plugins_path: str) -> None:
        self._registry = registry
        self._problems = problems
        self._plugins_path = plugins_path
        self._specs: dict[str, PluginSpec] = {}
        self.failed = False

    def error(self, path: str, message: str) -> None:
        self.failed = True
        self._problems.error(path, message)

    def known(self, entry: PluginEntry) -> bool:
        """Look the plugin up (importing `module:attr` names); report it when unknown."""
        if entry.name in self._specs:
            return True
        name_path = child(entry.path, "name")
        if not entry.name:
            self.error(name_path, "required value")
            return False
        try:
            self._specs[entry.name] = self._registry.get(entry.name)
        except UnknownPluginError:
            if entry.name in REMOVED_PLUGINS:
                self.error(
                    name_path,
                    f'plugin "{entry.name}" was removed in kubescheduler.config.k8s.io/v1',
                )
            else:
                self.error(name_path, f'unknown plugin "{entry.name}"')
            return False
        except (TypeError, ValueError) as exc:  # a `module:attr` naming something else
            self.error(name_path, f'cannot load plugin "{entry.name}": {exc}')
            return False
        return True

    def is_known(self, name: str) -> bool:
        return name in self._specs

    def implements(self, name: str, point: str) -> bool:
        return point in self._specs[name].extension_points()

    def defaults(self) -> tuple[PluginEntry, ...]:
        entries = []
        for name, weight in DEFAULT_PLUGINS:
            if name in self._registry:
                self._specs[name] = self._registry.get(name)
                entries.append(PluginEntry(name, weight))
            else:
                # A registry without every in-tree plugin (tests, trimmed builds) still
                # gets the rest of the defaults; the gap is visible as a warning.
                self._problems.warn(
                    child(self._plugins_path, MULTI_POINT),
                    f'default plugin "{name}" is not registered; left out of the defaults',
                )
        return tuple(entries)

    def checked_point(self, point: str, entries: Sequence[PluginEntry]) -> list[PluginEntry]:
        """The point's own entries that exist, implement it and appear once."""
        kept: list[PluginEntry] = []
        seen: set[str] = set()
        for entry in entries:
            if entry.name not in self._specs:
                continue  # already reported as unknown
            if not self.implements(entry.name, point):
                self.error(
                    child(entry.path, "name"), f'plugin "{entry.name}" does not implement {point}'
                )
            elif entry.name in seen:
                self.error(
                    child(entry.path, "name"), f'plugin "{entry.name}" is enabled twice at {point}'
                )
            else:
                seen.add(entry.name)
                kept.append(entry)
        return kept

    def expand(
        self,
        point: str,
        own: Sequence[PluginEntry],
        disabled: frozenset[str],
        multi: Sequence[PluginEntry],
    ) -> list[PluginEntry]:
        """runtime expandMultiPointPlugins for one point."""
        if ALL in disabled:
            return list(own)
        own_names = {entry.name for entry in own}
        overridden: set[str] = set()
        from_multi: dict[str, PluginEntry] = {}
        for entry in multi:
            if entry.name not in self._specs or not self.implements(entry.name, point):
                continue
            if entry.name in disabled:
                continue
            if entry.name in own_names:
                overridden.add(entry.name)
            elif entry.name in from_multi:
                self.error(
                    child(entry.path, "name"),
                    f'plugin "{entry.name}" is enabled twice through multiPoint',
                )
            else:
                from_multi[entry.name] = entry
        return [
            *(e for e in own if e.name in overridden),
            *from_multi.values(),
            *(e for e in own if e.name not in overridden),
        ]

    def score_weights(
        self,
        point: str,
        score: Sequence[PluginEntry],
        multi: Sequence[PluginEntry],
        score_path: str,
    ) -> dict[str, int]:
        """runtime getScoreWeights for `point` (score or placementScore): first mention
        wins, 0 means 1, no int64 overflow."""
        weights: dict[str, int] = {}
        total = 0
        for entry in (*score, *multi):
            if entry.name not in self._specs or entry.name in weights:
                continue
            if not self.implements(entry.name, point):
                continue
            weight = entry.weight or 0
            if weight < 0:
                self.error(
                    child(entry.path, "weight"),
                    f"must not be negative, got {weight} (0 or unset means 1)",
                )
            weights[entry.name] = max(weight, 0) or 1
            total += weights[entry.name] * MAX_NODE_SCORE
        if total > INT64_MAX:
            label = point[0].upper() + point[1:]
            self.error(score_path, f"total score of {label} plugins could overflow")
        return weights


def resolve_plugins(
    sets: Mapping[str, PluginSetConfig],
    registry: Registry,
    problems: Problems,
    plugins_path: str,
) -> ResolvedPlugins:
    """The final per-point lists of one profile.

    `sets` maps multiPoint and the EXTENSION_POINTS (camelCase) to what the file wrote;
    missing points are empty. Problems are added to `problems`; the lists returned then
    leave out whatever was wrong.
    """
    resolver = _Resolver(registry, problems, plugins_path)

    def written(point: str) -> PluginSetConfig:
        return sets.get(point) or PluginSetConfig(child(plugins_path, point))

    for point in (MULTI_POINT, *EXTENSION_POINTS):
        for entry in written(point).enabled:
            resolver.known(entry)
    multi = merge_plugin_set(resolver.defaults(), written(MULTI_POINT))

    final: dict[str, list[PluginEntry]] = {}
    weights: dict[str, dict[str, int]] = {}
    for point in EXTENSION_POINTS:
        point_set = written(point)
        # v1 has no per-point defaults: a point's merged set is what the file enabled.
        own = resolver.checked_point(point, merge_plugin_set((), point_set))
        if point in WEIGHTED_POINTS:
            weights[point] = resolver.score_weights(point, own, multi, point_set.path)
        final[point] = resolver.expand(point, own, point_set.disabled, multi)

    points = {
        point: tuple(
            PluginRef(e.name, weights[point].get(e.name, 1) if point in weights else 0)
            for e in final[point]
        )
        for point in EXTENSION_POINTS
    }
    # Counts are checked only on a clean profile: an unknown plugin at queueSort would
    # otherwise also be reported as "no queueSort plugin".
    if not resolver.failed:
        queue_sort = points["queueSort"]
        if len(queue_sort) != 1:
            names = ", ".join(ref.name for ref in queue_sort) or "none"
            problems.error(
                written("queueSort").path,
                f"exactly one queueSort plugin must be enabled, got {len(queue_sort)} ({names})",
            )
        if not points["bind"]:
            problems.error(written("bind").path, "at least one bind plugin must be enabled")

    # Like kube-scheduler's pluginsNames: a multiPoint plugin disabled at every point is
    # still "used" (it is constructed and gets args).
    used = dict.fromkeys(e.name for e in multi if resolver.is_known(e.name))
    used.update(dict.fromkeys(ref.name for refs in points.values() for ref in refs))
    return ResolvedPlugins(points, tuple(used))
