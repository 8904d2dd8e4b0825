"""The seed article's file and the other deviations accepted with a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asched.config import load_config
from tests.unit.config.fake_registry import NodeAffinityArgs, fake_registry
from tests.unit.config.support import config_doc, load_doc, problems_of, profile_doc
from tests.unit.config.test_plugin_sets import (
    DEFAULT_FILTER,
    DEFAULT_PRE_SCORE,
    DEFAULT_SCORE,
    DEFAULTS,
    without,
)

SEED = Path(__file__).parents[2] / "data" / "configs" / "seed-node-affinity-plugin.yaml"


def test_seed_file_loads_with_one_warning_per_deviation() -> None:
    config = load_config(SEED, fake_registry())
    assert config.warnings == (
        "apiVersion: kubescheduler.config.k8s.io/v1beta3 was removed in Kubernetes 1.29; "
        "read as kubescheduler.config.k8s.io/v1",
        'kind: "Configuration" is not the kind of this schema; read as KubeSchedulerConfiguration',
        "pluginConfig: top-level pluginConfig is not part of KubeSchedulerConfiguration; "
        "applied to every profile (a profile's own pluginConfig entry for the same plugin wins)",
        "profiles[0].plugins: capitalised extension point names (Filter, Score, PreScore, "
        "QueueSort, Bind) read as filter, score, preScore, queueSort, bind",
    )


def test_seed_file_keeps_the_default_plugins_and_carries_the_args() -> None:
    [profile] = load_config(SEED, fake_registry()).profiles
    assert profile.scheduler_name == "custom-scheduler"
    # kube-scheduler's expansion runs a default re-listed at a point first there
    # (expandMultiPointPlugins "part 1"); nothing is lost or duplicated.
    reordered = {
        "filter": ("NodeAffinity", *without(DEFAULT_FILTER, "NodeAffinity")),
        "preScore": ("NodeAffinity", *without(DEFAULT_PRE_SCORE, "NodeAffinity")),
    }
    for point, names in (DEFAULTS | reordered).items():
        if point != "score":
            assert profile.enabled(point) == names, point
    # Re-listed at score without a weight: kube-scheduler reads weight 0, hence 1.
    assert tuple(profile.plugins["score"]) == (
        ("NodeAffinity", 1),
        *without(DEFAULT_SCORE, "NodeAffinity"),
    )
    assert profile.plugin_args["NodeAffinity"] == NodeAffinityArgs(
        label_key="node-type", label_value="gpu"
    )


def test_top_level_plugin_config_applies_to_every_profile_and_a_profiles_own_wins() -> None:
    shared = [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 7}}]
    own = [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 9}}]
    config = load_doc(
        config_doc(profile_doc("a"), profile_doc("b", pluginConfig=own), pluginConfig=shared)
    )
    weights = [p.plugin_args["InterPodAffinity"].hard_pod_affinity_weight for p in config.profiles]
    assert weights == [7, 9]


def test_top_level_plugin_config_errors_are_reported_once_at_their_own_path() -> None:
    shared = [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 700}}]
    doc = config_doc(profile_doc("a"), profile_doc("b"), pluginConfig=shared)
    assert problems_of(doc) == [
        ("pluginConfig[0].args.hardPodAffinityWeight", "must be in [0, 100]"),
    ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param(
            {"apiVersion": "kubescheduler.config.k8s.io/v1beta2"},
            (
                "apiVersion",
                "kubescheduler.config.k8s.io/v1beta2 was removed in "
                "Kubernetes 1.28 and is not supported; use "
                "kubescheduler.config.k8s.io/v1",
            ),
            id="v1beta2",
        ),
        pytest.param(
            {"apiVersion": "kubescheduler.config.k8s.io/v1beta1"},
            (
                "apiVersion",
                "kubescheduler.config.k8s.io/v1beta1 was removed in "
                "Kubernetes 1.26 and is not supported; use "
                "kubescheduler.config.k8s.io/v1",
            ),
            id="v1beta1",
        ),
        pytest.param(
            {"apiVersion": "kubescheduler.config.k8s.io/v1alpha1"},
            (
                "apiVersion",
                "kubescheduler.config.k8s.io/v1alpha1 was removed from "
                "Kubernetes and is not supported; use "
                "kubescheduler.config.k8s.io/v1",
            ),
            id="v1alpha1",
        ),
        pytest.param(
            {"apiVersion": "apps/v1"},
            (
                "apiVersion",
                'unsupported apiVersion "apps/v1"; use "kubescheduler.config.k8s.io/v1"',
            ),
            id="other-group",
        ),
        pytest.param(
            {"apiVersion": None},
            ("apiVersion", 'required value; use "kubescheduler.config.k8s.io/v1"'),
            id="missing-api-version",
        ),
        pytest.param(
            {"kind": "Pod"},
            ("kind", "unsupported kind 'Pod'; use \"KubeSchedulerConfiguration\""),
            id="other-kind",
        ),
        pytest.param(
            {"kind": None},
            ("kind", 'required value; use "KubeSchedulerConfiguration"'),
            id="missing-kind",
        ),
    ],
)
def test_versions_and_kinds_that_are_refused(
    changes: dict[str, Any], expected: tuple[str, str]
) -> None:
    doc = {k: v for k, v in (config_doc() | changes).items() if v is not None}
    assert problems_of(doc) == [expected]


def test_v1beta3_is_read_as_v1_including_v1_only_fields() -> None:
    doc = config_doc(
        profile_doc(percentageOfNodesToScore=30),
        delayCacheUntilActive=True,
        apiVersion="kubescheduler.config.k8s.io/v1beta3",
    )
    config = load_doc(doc)
    assert config.delay_cache_until_active is True
    assert config.profiles[0].percentage_of_nodes_to_score == 30
    assert len(config.warnings) == 1


def test_the_same_point_spelled_twice_is_an_error() -> None:
    plugins = {
        "filter": {"enabled": [{"name": "Custom"}]},
        "Filter": {"enabled": [{"name": "NodeName"}]},
    }
    assert problems_of(config_doc(profile_doc(plugins=plugins))) == [
        ("profiles[0].plugins.Filter", "the same extension point as filter"),
    ]


def test_errors_under_a_capitalised_point_use_the_files_spelling() -> None:
    plugins = {"Score": {"enabled": [{"name": "Nope"}]}}
    assert problems_of(config_doc(profile_doc(plugins=plugins))) == [
        ("profiles[0].plugins.Score.enabled[0].name", 'unknown plugin "Nope"'),
    ]
