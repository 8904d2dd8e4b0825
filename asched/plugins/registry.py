"""The in-tree plugin registry (kube-scheduler plugins/registry.go NewInTreeRegistry).

Every in-tree plugin is listed once, as the `module:attribute` path of its PluginSpec;
adding a plugin is adding one line to IN_TREE. `in_tree_registry()` returns a fresh
Registry each call (a Registry also records `module:attr` plugins the config names),
and fails loudly when a listed module or spec is missing or two specs share a name.
"""

from __future__ import annotations

from asched.framework.registry import PluginSpec, Registry, import_spec

IN_TREE: tuple[str, ...] = (
    "asched.plugins.schedulinggates:SPEC",
    "asched.plugins.queuesort:SPEC",
    "asched.plugins.nodeunschedulable:SPEC",
    "asched.plugins.nodename:SPEC",
    "asched.plugins.tainttoleration:SPEC",
    "asched.plugins.nodeaffinity:SPEC",
    "asched.plugins.nodeports:SPEC",
    "asched.plugins.noderesources:FIT_SPEC",
    "asched.plugins.noderesources:BALANCED_ALLOCATION_SPEC",
    "asched.plugins.volumes:VOLUME_RESTRICTIONS_SPEC",
    "asched.plugins.volumes:NODE_VOLUME_LIMITS_SPEC",
    "asched.plugins.volumes:VOLUME_BINDING_SPEC",
    "asched.plugins.volumes:VOLUME_ZONE_SPEC",
    "asched.plugins.imagelocality:SPEC",
    "asched.plugins.defaultbinder:SPEC",
    "asched.plugins.nodedeclaredfeatures:SPEC",
    "asched.plugins.podtopologyspread:SPEC",
    "asched.plugins.interpodaffinity:SPEC",
    "asched.plugins.dynamicresources:SPEC",
    "asched.plugins.defaultpreemption:SPEC",
    "asched.plugins.coscheduling:SPEC",
    "asched.plugins.gangscheduling:SPEC",
    "asched.plugins.topologyplacement:SPEC",
    "asched.plugins.podgrouppodscount:SPEC",
)


def in_tree_specs() -> list[PluginSpec]:
    return [import_spec(path) for path in IN_TREE]


def in_tree_registry() -> Registry:
    registry = Registry()
    for spec in in_tree_specs():
        registry.register(spec)
    return registry
