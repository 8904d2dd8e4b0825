"""Top-level fields, defaults, profiles and the cross-profile checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asched.config import (
    ClientConnection,
    ConfigError,
    LeaderElection,
    SchedulerConfig,
    default_config,
    load_config,
)
from tests.unit.config.fake_registry import (
    DefaultPreemptionArgs,
    FitArgs,
    InterPodAffinityArgs,
    ResourceSpec,
    ScoringStrategy,
    fake_registry,
)
from tests.unit.config.support import config_doc, load_doc, problems_of, profile_doc

CONFIGS = Path(__file__).parents[2] / "data" / "configs"


def test_default_config_mirrors_kube_scheduler_defaults() -> None:
    config = default_config(fake_registry())
    assert config == load_doc(config_doc())
    assert (config.parallelism, config.percentage_of_nodes_to_score) == (16, 0)
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1, 10)
    assert config.client_connection == ClientConnection(
        kubeconfig="",
        qps=50.0,
        burst=100,
        accept_content_types="",
        content_type="application/vnd.kubernetes.protobuf",
    )
    assert config.leader_election == LeaderElection(
        leader_elect=True,
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        resource_lock="leases",
        resource_name="asched",
        resource_namespace="kube-system",
    )
    assert config.delay_cache_until_active is False
    assert config.warnings == ()
    [profile] = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None


def test_plugins_with_an_args_type_get_defaulted_args_without_plugin_config() -> None:
    profile = default_config(fake_registry()).profiles[0]
    assert profile.plugin_args["NodeResourcesFit"] == FitArgs()
    assert profile.plugin_args["DefaultPreemption"] == DefaultPreemptionArgs(10, 100)
    assert profile.plugin_args["PrioritySort"] is None  # no args type
    assert set(profile.plugin_args) == {
        ref.name for refs in profile.plugins.values() for ref in refs
    }


def test_full_v1_file() -> None:
    config = load_config(CONFIGS / "full-v1.yaml", fake_registry())
    assert config.warnings == ()
    assert (config.parallelism, config.percentage_of_nodes_to_score) == (32, 40)
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (2, 20)
    assert config.delay_cache_until_active is True
    assert config.client_connection == ClientConnection(
        "/etc/kubernetes/scheduler.conf", 100.0, 200, "application/json", "application/json"
    )
    assert config.leader_election == LeaderElection(
        True, 30.0, 20.0, 2.5, "leases", "asched", "asched-system"
    )
    default, spread = config.profiles
    assert default.percentage_of_nodes_to_score == 60
    assert default.score_weights()["NodeResourcesFit"] == 5
    assert "ImageLocality" not in default.enabled("score")
    assert "NodePorts" not in default.enabled("filter")
    assert "NodePorts" in default.enabled("preFilter")
    assert default.plugin_args["NodeResourcesFit"] == FitArgs(
        scoring_strategy=ScoringStrategy(
            "MostAllocated", (ResourceSpec("cpu", 2), ResourceSpec("memory", 1))
        )
    )
    assert default.plugin_args["DefaultPreemption"] == DefaultPreemptionArgs(20, 50)
    assert spread.scheduler_name == "spread-scheduler"
    assert spread.percentage_of_nodes_to_score is None
    assert tuple(spread.plugins["score"]) == (("PodTopologySpread", 10),)
    assert spread.plugin_args["InterPodAffinity"] == InterPodAffinityArgs(5)
    assert default.plugin_args["InterPodAffinity"] == InterPodAffinityArgs(1)


@pytest.mark.parametrize(
    ("profiles", "names"),
    [
        pytest.param([], ("default-scheduler",), id="no-profiles-gets-the-default-one"),
        pytest.param([{}], ("default-scheduler",), id="single-unnamed-profile-is-named"),
        pytest.param([profile_doc("a"), profile_doc("b")], ("a", "b"), id="two-named"),
    ],
)
def test_profile_names(profiles: list[dict[str, Any]], names: tuple[str, ...]) -> None:
    config = load_doc(config_doc(profiles=profiles))
    assert tuple(p.scheduler_name for p in config.profiles) == names
    assert config.profile(names[-1]) is config.profiles[-1]


def test_profiles_with_the_same_queue_sort_and_args_load() -> None:
    shared = {"queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "Coscheduling"}]}}
    args = [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 30}}]
    config = load_doc(
        config_doc(
            profile_doc("a", plugins=shared, pluginConfig=args),
            profile_doc("b", plugins=shared, pluginConfig=args),
        )
    )
    assert [p.enabled("queueSort") for p in config.profiles] == [("Coscheduling",)] * 2


def test_config_from_a_path_names_the_file_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Nope\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, fake_registry())
    assert info.value.filename == str(path)
    assert info.value.problems == [
        ("kind", "unsupported kind 'Nope'; use \"KubeSchedulerConfiguration\""),
    ]


def test_bytes_source() -> None:
    text = b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    assert isinstance(load_config(text, fake_registry()), SchedulerConfig)


SORT_CUSTOM = {"queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "CustomSort"}]}}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param(config_doc(foo=1), [("foo", "unknown field")], id="unknown-top-level-field"),
        pytest.param(
            config_doc(profile_doc(bar=True)),
            [("profiles[0].bar", "unknown field")],
            id="unknown-profile-field",
        ),
        pytest.param(
            config_doc(leaderElection={"leaseDuraton": "5s"}),
            [("leaderElection.leaseDuraton", "unknown field")],
            id="unknown-nested-field",
        ),
        pytest.param(
            config_doc(parallelism=0),
            [("parallelism", "0: must be greater than zero")],
            id="parallelism-zero",
        ),
        pytest.param(
            config_doc(parallelism="16"),
            [("parallelism", "must be an integer, got string")],
            id="parallelism-string",
        ),
        pytest.param(
            config_doc(parallelism=True),
            [("parallelism", "must be an integer, got boolean")],
            id="parallelism-bool",
        ),
        pytest.param(
            config_doc(percentageOfNodesToScore=101),
            [("percentageOfNodesToScore", "101 is not in the valid range [0-100]")],
            id="percentage-above-100",
        ),
        pytest.param(
            config_doc(profile_doc(percentageOfNodesToScore=-1)),
            [("profiles[0].percentageOfNodesToScore", "-1 is not in the valid range [0-100]")],
            id="profile-percentage-negative",
        ),
        pytest.param(
            config_doc(podInitialBackoffSeconds=0),
            [("podInitialBackoffSeconds", "0: must be greater than 0")],
            id="initial-backoff-zero",
        ),
        pytest.param(
            config_doc(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
            [
                (
                    "podMaxBackoffSeconds",
                    "4: must be greater than or equal to podInitialBackoffSeconds",
                )
            ],
            id="max-backoff-below-initial",
        ),
        pytest.param(
            config_doc(clientConnection={"burst": -1}),
            [("clientConnection.burst", "-1: must be non-negative")],
            id="negative-burst",
        ),
        pytest.param(
            config_doc(clientConnection={"contentType": "application/yaml"}),
            [
                (
                    "clientConnection.contentType",
                    "'application/yaml': asched writes "
                    "'application/vnd.kubernetes.protobuf' or 'application/json'",
                )
            ],
            id="content-type-neither-protobuf-nor-json",
        ),
        pytest.param(
            config_doc(clientConnection={"contentType": "application/json"}),
            [],
            id="content-type-json",
        ),
        pytest.param(
            config_doc(leaderElection={"leaseDuration": "15"}),
            [("leaderElection.leaseDuration", "missing unit in duration '15'")],
            id="duration-without-unit",
        ),
        pytest.param(
            config_doc(leaderElection={"leaseDuration": 15}),
            [
                (
                    "leaderElection.leaseDuration",
                    'must be a duration string such as "15s", got number',
                )
            ],
            id="duration-as-number",
        ),
        pytest.param(
            config_doc(leaderElection={"leaseDuration": "5s"}),
            [("leaderElection.leaseDuration", "must be greater than renewDeadline")],
            id="lease-shorter-than-renew-deadline",
        ),
        pytest.param(
            config_doc(leaderElection={"retryPeriod": "0s"}),
            [("leaderElection.retryPeriod", "must be greater than zero")],
            id="zero-retry-period",
        ),
        pytest.param(
            config_doc(leaderElection={"leaderElect": False, "retryPeriod": "0s"}),
            [],
            id="durations-unchecked-without-leader-election",
        ),
        pytest.param(
            config_doc(leaderElection={"resourceLock": "endpoints"}),
            [("leaderElection.resourceLock", 'must be "leases"')],
            id="resource-lock-not-leases",
        ),
        pytest.param(
            config_doc(profile_doc("a"), profile_doc("a")),
            [("profiles[1].schedulerName", 'duplicate value "a" (also profiles[0])')],
            id="duplicate-scheduler-names",
        ),
        pytest.param(
            config_doc(profile_doc("a"), {}),
            [("profiles[1].schedulerName", "required value")],
            id="unnamed-profile-among-several",
        ),
        pytest.param(
            config_doc(profile_doc("")),
            [("profiles[0].schedulerName", "required value")],
            id="empty-scheduler-name",
        ),
        pytest.param(
            config_doc(profile_doc("a"), profile_doc("b", plugins=SORT_CUSTOM)),
            [
                (
                    "profiles[1].plugins.queueSort",
                    "must be the same for all profiles: ['CustomSort'] here, "
                    "['PrioritySort'] in profiles[0]",
                )
            ],
            id="profiles-with-different-queue-sort",
        ),
        pytest.param(
            config_doc(
                profile_doc("a"),
                profile_doc(
                    "b",
                    pluginConfig=[{"name": "PrioritySort", "args": None}],
                    plugins={
                        "QueueSort": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "CustomSort"}],
                        }
                    },
                ),
            ),
            [
                (
                    "profiles[1].plugins.QueueSort",
                    "must be the same for all profiles: ['CustomSort'] here, "
                    "['PrioritySort'] in profiles[0]",
                )
            ],
            id="queue-sort-path-in-the-files-spelling",
        ),
        pytest.param(
            config_doc(profiles="default"),
            [("profiles", "must be an array, got string")],
            id="profiles-not-a-list",
        ),
        pytest.param(
            config_doc(profile_doc(plugins=[])),
            [("profiles[0].plugins", "must be an object, got array")],
            id="plugins-not-an-object",
        ),
    ],
)
def test_top_level_and_profile_errors(doc: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    if not expected:
        load_doc(doc)
        return
    assert problems_of(doc) == expected


def test_queue_sort_args_must_match_across_profiles() -> None:
    sort = {"queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "Coscheduling"}]}}
    doc = config_doc(
        profile_doc("a", plugins=sort),
        profile_doc(
            "b",
            plugins=sort,
            pluginConfig=[{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 5}}],
        ),
    )
    assert problems_of(doc) == [
        (
            "profiles[1].pluginConfig",
            "args of queueSort plugin Coscheduling must be the same for all profiles",
        ),
    ]


def test_error_message_lists_every_problem_on_its_own_line() -> None:
    doc = config_doc(
        profile_doc(plugins={"score": {"enabled": [{"name": "Foo"}]}}), parallelism=0, foo=1
    )
    with pytest.raises(ConfigError) as info:
        load_doc(doc)
    assert str(info.value).splitlines() == [
        "parallelism: 0: must be greater than zero",
        "foo: unknown field",
        'profiles[0].plugins.score.enabled[0].name: unknown plugin "Foo"',
    ]


@pytest.mark.parametrize(
    ("top", "warning"),
    [
        pytest.param(
            {"enableProfiling": True},
            "enableProfiling: ignored: asched serves no profiling endpoints",
            id="enable-profiling",
        ),
        pytest.param(
            {"enableContentionProfiling": True},
            "enableContentionProfiling: ignored: asched serves no profiling endpoints",
            id="enable-contention-profiling",
        ),
    ],
)
def test_known_fields_asched_ignores_are_warned(top: dict[str, Any], warning: str) -> None:
    assert load_doc(config_doc(**top)).warnings == (warning,)


def test_loaded_profiles_are_immutable() -> None:
    profile = default_config(fake_registry()).profiles[0]
    with pytest.raises(TypeError):
        profile.plugins["filter"] = ()  # type: ignore[index]
    with pytest.raises(AttributeError):
        profile.scheduler_name = "other"  # type: ignore[misc]


def test_non_utf8_bytes_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="config is not UTF-8"):
        load_config(b"kind: \xff\n", fake_registry())
