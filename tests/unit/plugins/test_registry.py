"""The in-tree registry: every listed plugin loads, under its kube-scheduler name, with
kube-scheduler's extension points."""

from __future__ import annotations

import pytest

from asched.framework.registry import PluginSpec, import_spec
from asched.plugins.registry import IN_TREE, in_tree_registry
from tests.unit.plugins.fakes import FakeHandle

# kube-scheduler v1.37's extension points for the plugins this registry owns (ImageLocality
# also has PreScore in asched: it precomputes there and may Skip).
EXPECTED_POINTS = {
    "SchedulingGates": {"preEnqueue"},
    "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"},
    "NodeName": {"filter"},
    "TaintToleration": {"filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeBinding": {"preFilter", "filter", "preScore", "score", "reserve", "preBind"},
    "VolumeZone": {"preFilter", "filter"},
    "ImageLocality": {"preScore", "score"},
    "DefaultBinder": {"bind"},
}


def test_registry_has_every_plugin_with_its_points() -> None:
    registry = in_tree_registry()
    got = {spec.name: set(spec.extension_points()) for spec in registry}
    assert {name: got.get(name) for name in EXPECTED_POINTS} == EXPECTED_POINTS


def test_each_call_returns_a_fresh_registry() -> None:
    assert in_tree_registry() is not in_tree_registry()


@pytest.mark.parametrize("path", IN_TREE)
def test_every_plugin_builds_with_default_args(path: str) -> None:
    spec = import_spec(path)
    plugin = spec.new(spec.parse_args(None, "args"), FakeHandle())
    assert plugin.name == spec.name


def test_import_spec_rejects_what_is_not_a_spec() -> None:
    with pytest.raises(TypeError):
        import_spec("asched.plugins.registry:IN_TREE")
    assert isinstance(import_spec("asched.plugins.queuesort:SPEC"), PluginSpec)
