"""The cycle benchmark's plugin profiles build with the real registry."""

from __future__ import annotations

import pytest

from asched.framework.points import ExtensionPoint as EP
from benchmarks.profiles import PROFILES, build


@pytest.mark.parametrize("name", PROFILES)
def test_every_profile_builds(name: str) -> None:
    spec, registry = build(name)
    filters = [n for n, _ in spec.plugins[EP.FILTER]]
    assert "NodeResourcesFit" in filters
    for n in filters:
        assert n in registry


def test_the_added_plugins() -> None:
    per_node, _ = build("per-node")
    assert [n for n, _ in per_node.plugins[EP.FILTER]][-1] == "RegionCheck"
    assert ("CoresScore", 1) in per_node.plugins[EP.SCORE]
    policies, _ = build("policies")
    scores = {n for n, _ in policies.plugins[EP.SCORE]}
    assert {"StrongestCPU", "CPUUtilization", "GPUResource", "Location"} <= scores
    assert "RegionFence" in [n for n, _ in policies.plugins[EP.FILTER]]


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown profile 'fast'"):
        build("fast")
