"""pluginConfig: args parsed by each plugin's Args type, errors at the args field path."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.config.fake_registry import CoschedulingArgs, FitArgs, ScoringStrategy
from tests.unit.config.support import config_doc, load_doc, problems_of, profile_doc


def with_config(*entries: dict[str, Any], **profile: Any) -> dict[str, Any]:
    return config_doc(profile_doc(pluginConfig=list(entries), **profile))


def test_args_are_parsed_by_the_plugins_args_type() -> None:
    doc = with_config(
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
    )
    args = load_doc(doc).profiles[0].plugin_args["NodeResourcesFit"]
    assert args == FitArgs(scoring_strategy=ScoringStrategy("MostAllocated"))


def test_type_meta_inside_args_is_accepted() -> None:
    doc = with_config(
        {
            "name": "NodeResourcesFit",
            "args": {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "NodeResourcesFitArgs",
            },
        }
    )
    assert load_doc(doc).profiles[0].plugin_args["NodeResourcesFit"] == FitArgs()


def test_args_for_a_registered_plugin_that_is_not_enabled_are_validated_not_kept() -> None:
    accepted = with_config({"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}})
    assert "Coscheduling" not in load_doc(accepted).profiles[0].plugin_args
    refused = with_config({"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 0}})
    assert problems_of(refused) == [
        ("profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds", "must be in [1, 3600]"),
    ]


def test_an_enabled_out_of_tree_plugin_gets_its_args() -> None:
    doc = with_config(
        {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}},
        plugins={"permit": {"enabled": [{"name": "Coscheduling"}]}},
    )
    assert load_doc(doc).profiles[0].plugin_args["Coscheduling"] == CoschedulingArgs(10)


ARGS = "profiles[0].pluginConfig[0]"


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        pytest.param(
            [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Bogus"}}}],
            [(f"{ARGS}.args.scoringStrategy.type", 'unsupported value "Bogus"')],
            id="bad-args-value-names-the-args-field",
        ),
        pytest.param(
            [{"name": "NodeResourcesFit", "args": {"bogus": 1}}],
            [(f"{ARGS}.args.bogus", "unknown field")],
            id="unknown-args-field",
        ),
        pytest.param(
            [{"name": "Nope", "args": {}}],
            [(f"{ARGS}.name", 'unknown plugin "Nope"')],
            id="args-for-unknown-plugin",
        ),
        pytest.param(
            [{"name": "PrioritySort", "args": {"x": 1}}],
            [(f"{ARGS}.args", "plugin PrioritySort takes no args")],
            id="args-for-a-plugin-without-args",
        ),
        pytest.param(
            [{"name": "NodeAffinity"}, {"name": "NodeAffinity"}],
            [
                (
                    "profiles[0].pluginConfig[1].name",
                    'duplicate entry for plugin "NodeAffinity" (first at '
                    "profiles[0].pluginConfig[0])",
                )
            ],
            id="duplicate-entry",
        ),
        pytest.param([{"args": {}}], [(f"{ARGS}.name", "required value")], id="missing-name"),
        pytest.param(
            [{"name": "NodeAffinity", "args": "labelKey=x"}],
            [(f"{ARGS}.args", "must be an object, got string")],
            id="args-not-an-object",
        ),
        pytest.param(
            [{"name": "NodeAffinity", "args": {"kind": "NodeResourcesFitArgs"}}],
            [(f"{ARGS}.args.kind", 'must be "NodeAffinityArgs" for plugin "NodeAffinity"')],
            id="args-kind-of-another-plugin",
        ),
        pytest.param(
            [{"name": "NodeAffinity", "arg": {}}],
            [(f"{ARGS}.arg", "unknown field")],
            id="typo-in-entry-field",
        ),
    ],
)
def test_plugin_config_errors(
    entries: list[dict[str, Any]], expected: list[tuple[str, str]]
) -> None:
    assert problems_of(with_config(*entries)) == expected
