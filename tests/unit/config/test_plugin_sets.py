"""Merge and expansion rules (kube-scheduler mergePluginSet + expandMultiPointPlugins)."""

from __future__ import annotations

from typing import Any

import pytest

from asched.config import EXTENSION_POINTS, PluginRef
from tests.unit.config.fake_registry import fake_registry
from tests.unit.config.support import config_doc, load_doc, problems_of, profile_doc

DEFAULT_FILTER = (  # kube-scheduler v1.37.2 getDefaultPlugins order
    "NodeName",
    "NodeUnschedulable",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "NodeDeclaredFeatures",
)
DEFAULT_PRE_FILTER = (
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "NodeDeclaredFeatures",
)
DEFAULT_PRE_SCORE = (
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "NodeResourcesBalancedAllocation",
)
DEFAULT_SCORE = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)
DEFAULTS: dict[str, tuple[Any, ...]] = {
    "preEnqueue": ("SchedulingGates", "DynamicResources", "GangScheduling"),
    "queueSort": ("PrioritySort",),
    "preFilter": DEFAULT_PRE_FILTER,
    "filter": DEFAULT_FILTER,
    "postFilter": ("DefaultPreemption",),
    "preScore": DEFAULT_PRE_SCORE,
    "score": DEFAULT_SCORE,
    "reserve": ("VolumeBinding", "DynamicResources"),
    "permit": ("GangScheduling",),
    "preBind": ("VolumeBinding", "DynamicResources"),
    "bind": ("DefaultBinder",),
    "postBind": (),
    "placementGenerate": ("TopologyPlacementGenerator",),
    "placementScore": ("PodGroupPodsCount",),
    "podGroupPostFilter": ("DynamicResources", "DefaultPreemption"),
}


def resolved(plugins: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Each point as names, and score as (name, weight) pairs, for one profile."""
    profile = load_doc(config_doc(profile_doc(plugins=plugins))).profiles[0]
    return {
        point: tuple(profile.plugins[point]) if point == "score" else profile.enabled(point)
        for point in EXTENSION_POINTS
    }


def without(names: tuple[Any, ...], *dropped: str) -> tuple[Any, ...]:
    return tuple(n for n in names if (n[0] if isinstance(n, tuple) else n) not in dropped)


def test_defaults_only_expand_multi_point_to_every_point_in_order() -> None:
    assert resolved({}) == DEFAULTS


def test_placement_score_weights_resolve_like_score_weights() -> None:
    """getValidScoreWeights runs for PlacementScore too: multiPoint's weight, 0 means 1."""
    plugins = {"multiPoint": {"enabled": [{"name": "PodGroupPodsCount", "weight": 4}]}}
    profile = load_doc(config_doc(profile_doc(plugins=plugins))).profiles[0]
    assert tuple(profile.plugins["placementScore"]) == (("PodGroupPodsCount", 4),)
    plugins = {"placementScore": {"enabled": [{"name": "PodGroupPodsCount", "weight": 0}]}}
    profile = load_doc(config_doc(profile_doc(plugins=plugins))).profiles[0]
    assert tuple(profile.plugins["placementScore"]) == (("PodGroupPodsCount", 1),)


@pytest.mark.parametrize(
    ("plugins", "changed"),
    [
        pytest.param(
            {"filter": {"disabled": [{"name": "NodePorts"}]}},
            {"filter": without(DEFAULT_FILTER, "NodePorts")},
            id="disable-one-default-at-one-point-only",
        ),
        pytest.param(
            {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "Custom", "weight": 5}]}},
            {"score": (("Custom", 5),)},
            id="disable-star-at-score-then-enable-custom",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 7}]}},
            {
                "score": tuple(
                    ("NodeAffinity", 7) if n == "NodeAffinity" else (n, w) for n, w in DEFAULT_SCORE
                )
            },
            id="relist-default-in-multipoint-keeps-position-with-new-weight",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "Custom"}]}},
            {"filter": (*DEFAULT_FILTER, "Custom"), "score": (*DEFAULT_SCORE, ("Custom", 1))},
            id="multipoint-custom-expands-to-the-points-it-implements",
        ),
        pytest.param(
            {
                "multiPoint": {"enabled": [{"name": "Custom", "weight": 5}]},
                "score": {"enabled": [{"name": "Custom", "weight": 9}]},
            },
            {"filter": (*DEFAULT_FILTER, "Custom"), "score": (("Custom", 9), *DEFAULT_SCORE)},
            id="specific-point-overrides-multipoint-and-runs-first",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "NodeResourcesFit"}]}},
            {"filter": ("NodeResourcesFit", *without(DEFAULT_FILTER, "NodeResourcesFit"))},
            id="default-relisted-at-a-point-moves-to-the-front",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "TaintToleration"}]}},
            {"score": (("TaintToleration", 1), *DEFAULT_SCORE[1:])},
            id="relisted-at-score-without-weight-gets-1-not-the-multipoint-weight",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "Custom", "weight": 0}]}},
            {"filter": (*DEFAULT_FILTER, "Custom"), "score": (*DEFAULT_SCORE, ("Custom", 1))},
            id="weight-0-means-1",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}},
            {"score": without(DEFAULT_SCORE, "ImageLocality")},
            id="disable-a-default-in-multipoint-removes-it-everywhere",
        ),
        pytest.param(
            {
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [
                        {"name": "CustomSort"},
                        {"name": "Custom"},
                        {"name": "CustomBinder"},
                    ],
                }
            },
            dict.fromkeys(EXTENSION_POINTS, ())
            | {
                "queueSort": ("CustomSort",),
                "filter": ("Custom",),
                "score": (("Custom", 1),),
                "bind": ("CustomBinder",),
            },
            id="disable-star-in-multipoint-drops-every-default",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "NodeName"}], "enabled": [{"name": "NodeName"}]}},
            {"filter": (*without(DEFAULT_FILTER, "NodeName"), "NodeName")},
            id="disabled-and-reenabled-at-a-point-runs-after-the-multipoint-plugins",
        ),
        pytest.param(
            {
                "filter": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "NodeName"}, {"name": "Custom"}],
                }
            },
            {"filter": ("NodeName", "Custom")},
            id="disable-star-at-a-point-keeps-only-its-own-plugins",
        ),
        pytest.param(
            {
                "queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "CustomSort"}]},
                "bind": {
                    "disabled": [{"name": "DefaultBinder"}],
                    "enabled": [{"name": "CustomBinder"}],
                },
            },
            {"queueSort": ("CustomSort",), "bind": ("CustomBinder",)},
            id="replace-queue-sort-and-binder",
        ),
        pytest.param(
            {
                "permit": {"enabled": [{"name": "Coscheduling"}]},
                "filter": {"enabled": [{"name": "Custom", "weight": 50}]},
            },
            {"permit": ("GangScheduling", "Coscheduling"), "filter": (*DEFAULT_FILTER, "Custom")},
            id="plugins-enabled-at-one-point-only-stay-there",
        ),
    ],
)
def test_merge_rules(plugins: dict[str, Any], changed: dict[str, tuple[Any, ...]]) -> None:
    assert resolved(plugins) == DEFAULTS | changed


def test_score_refs_are_name_weight_pairs() -> None:
    profile = load_doc(config_doc(profile_doc())).profiles[0]
    assert profile.plugins["score"][0] == PluginRef("TaintToleration", 3)
    assert profile.plugins["filter"][0] == PluginRef("NodeName", 0)
    name, weight = profile.plugins["score"][1]
    assert (name, weight) == ("NodeAffinity", 2)
    assert profile.score_weights()["PodTopologySpread"] == 2


def test_defaults_missing_from_the_registry_are_left_out_with_a_warning() -> None:
    config = load_doc(config_doc(), fake_registry(without=("ImageLocality",)))
    assert "ImageLocality" not in config.profiles[0].enabled("score")
    assert config.warnings == (
        'profiles[0].plugins.multiPoint: default plugin "ImageLocality" is not registered; '
        "left out of the defaults",
    )


P = "profiles[0].plugins"


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param(
            {"score": {"enabled": [{"name": "Custom"}, {"name": "Foo"}]}},
            (f"{P}.score.enabled[1].name", 'unknown plugin "Foo"'),
            id="unknown-plugin",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "Custom"}, {"name": "Custom"}]}},
            (
                f"{P}.multiPoint.enabled[1].name",
                'plugin "Custom" is enabled twice through multiPoint',
            ),
            id="double-registration-through-multipoint",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "Custom"}, {"name": "Custom"}]}},
            (f"{P}.filter.enabled[1].name", 'plugin "Custom" is enabled twice at filter'),
            id="double-registration-at-a-point",
        ),
        pytest.param(
            {"bind": {"enabled": [{"name": "NodeName"}]}},
            (f"{P}.bind.enabled[0].name", 'plugin "NodeName" does not implement bind'),
            id="plugin-at-a-point-it-does-not-implement",
        ),
        pytest.param(
            {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
            (
                f"{P}.queueSort",
                "exactly one queueSort plugin must be enabled, got 2 (PrioritySort, CustomSort)",
            ),
            id="two-queue-sort-plugins",
        ),
        pytest.param(
            {"bind": {"disabled": [{"name": "*"}]}},
            (f"{P}.bind", "at least one bind plugin must be enabled"),
            id="no-bind-plugin",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "Custom", "weight": -1}]}},
            (f"{P}.score.enabled[0].weight", "must not be negative, got -1 (0 or unset means 1)"),
            id="negative-weight",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "Custom", "weight": 3_000_000_000}]}},
            (f"{P}.score.enabled[0].weight", "3000000000 does not fit in a 32-bit integer"),
            id="weight-beyond-int32",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "Custom", "weight": "3"}]}},
            (f"{P}.score.enabled[0].weight", "must be an integer, got string"),
            id="weight-as-string",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "EBSLimits"}]}},
            (
                f"{P}.filter.enabled[0].name",
                'plugin "EBSLimits" was removed in kubescheduler.config.k8s.io/v1',
            ),
            id="plugin-removed-in-v1",
        ),
        pytest.param(
            {"filter": {"enabled": [{"weight": 1}]}},
            (f"{P}.filter.enabled[0].name", "required value"),
            id="plugin-without-name",
        ),
        pytest.param(
            {"filter": {"enable": [{"name": "Custom"}]}},
            (f"{P}.filter.enable", "unknown field"),
            id="typo-in-plugin-set-field",
        ),
        pytest.param(
            {"fliter": {"enabled": [{"name": "Custom"}]}},
            (f"{P}.fliter", "unknown field"),
            id="unknown-extension-point",
        ),
        pytest.param(
            {"placementScore": {"enabled": [{"name": "Custom"}]}},
            (
                f"{P}.placementScore.enabled[0].name",
                'plugin "Custom" does not implement placementScore',
            ),
            id="pod-group-extension-point",
        ),
    ],
)
def test_plugin_set_errors(plugins: dict[str, Any], expected: tuple[str, str]) -> None:
    assert problems_of(config_doc(profile_doc(plugins=plugins))) == [expected]


def test_every_problem_is_reported_not_just_the_first() -> None:
    plugins = {
        "filter": {"enabled": [{"name": "Nope1"}]},
        "score": {"enabled": [{"name": "Nope2"}]},
        "bind": {"enabled": [{"name": "NodeName"}]},
    }
    assert problems_of(config_doc(profile_doc(plugins=plugins))) == [
        (f"{P}.filter.enabled[0].name", 'unknown plugin "Nope1"'),
        (f"{P}.score.enabled[0].name", 'unknown plugin "Nope2"'),
        (f"{P}.bind.enabled[0].name", 'plugin "NodeName" does not implement bind'),
    ]


def test_module_attr_names_are_imported_and_expanded() -> None:
    name = "tests.unit.config.fake_registry:GANG"
    profile = load_doc(
        config_doc(profile_doc(plugins={"multiPoint": {"enabled": [{"name": name}]}}))
    ).profiles[0]
    assert profile.enabled("permit") == ("GangScheduling", name)
    assert profile.enabled("reserve") == ("VolumeBinding", "DynamicResources", name)
    assert profile.plugin_args[name] is None


def test_unimportable_module_attr_name_is_an_unknown_plugin() -> None:
    name = "tests.unit.config.no_such_module:GANG"
    doc = config_doc(profile_doc(plugins={"permit": {"enabled": [{"name": name}]}}))
    assert problems_of(doc) == [
        (f"{P}.permit.enabled[0].name", f'unknown plugin "{name}"'),
    ]
