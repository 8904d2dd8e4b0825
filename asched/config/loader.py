"""Load a KubeSchedulerConfiguration file into a SchedulerConfig, or explain why not.

The entry points of the package. Loading is: YAML -> strict typed decoding (unknown fields
are errors, as kube-scheduler's strict v1 decoding) -> kube-scheduler's defaults
(v1 `SetDefaults_KubeSchedulerConfiguration`) -> plugin merging per profile -> validation
(`ValidateKubeSchedulerConfiguration` plus the checks kube-scheduler makes when it builds a
framework). Every problem found is reported in one ConfigError; accepted deviations from
the schema are returned as `warnings`, each naming the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from asched.config.compat import TOP_LEVEL_PLUGIN_CONFIG_WARNING, check_type_meta
from asched.config.errors import ConfigError, Problems, index
from asched.config.extenders import decode_extenders
from asched.config.fields import Fields
from asched.config.model import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    ClientConnection,
    LeaderElection,
    SchedulerConfig,
)
from asched.config.plugin_config import decode_plugin_config, parse_entries
from asched.config.profiles import DecodedProfile, check_percentage, decode_profile
from asched.config.yaml_source import parse_yaml, read_source
from asched.framework.registry import Registry

log = structlog.get_logger(__name__)


def load_config(
    source: str | Path | bytes, registry: Registry, *, filename: str = ""
) -> SchedulerConfig:
    """Load and validate a config. A Path is a file; str and bytes are the YAML itself.

    Raises ConfigError listing every problem found. Plugin names are looked up in
    `registry` (which imports `module:attr` names on first use). Accepted deviations are
    returned in `warnings`, not logged: the caller reports them once. Reading is
    synchronous; call it before the event loop starts or through a worker thread.
    """
    if isinstance(source, Path) and not filename:
        filename = str(source)
    document = parse_yaml(read_source(source), filename)
    config = _decode(document, registry, filename)
    log.debug(
        "config_loaded", file=filename or None, profiles=[p.scheduler_name for p in config.profiles]
    )
    return config


def default_config(registry: Registry) -> SchedulerConfig:
    """kube-scheduler's defaults: one "default-scheduler" profile with the default plugins."""
    return _decode({"apiVersion": API_VERSION, "kind": KIND}, registry, "")


def _decode(document: Any, registry: Registry, filename: str) -> SchedulerConfig:
    problems = Problems()
    top = Fields.of(document, "", problems)
    if top is None:
        raise ConfigError(problems.errors, filename)
    check_type_meta(top, problems)

    parallelism = top.integer("parallelism", 16)
    if parallelism <= 0:
        top.error("parallelism", f"{parallelism}: must be greater than zero")
    percentage = top.integer("percentageOfNodesToScore", 0)
    check_percentage(percentage, top.at("percentageOfNodesToScore"), problems)
    initial_backoff = top.integer("podInitialBackoffSeconds", 1, bits=64)
    if initial_backoff <= 0:
        top.error("podInitialBackoffSeconds", f"{initial_backoff}: must be greater than 0")
    max_backoff = top.integer("podMaxBackoffSeconds", 10, bits=64)
    if max_backoff < initial_backoff:
        top.error(
            "podMaxBackoffSeconds",
            f"{max_backoff}: must be greater than or equal to podInitialBackoffSeconds",
        )
    client = _client_connection(top.mapping("clientConnection"))
    leader = _leader_election(top.mapping("leaderElection"), problems)
    delay_cache = top.flag("delayCacheUntilActive", False)
    _unsupported_top_level(top, problems)
    extenders = decode_extenders(top.array("extenders"), top.at("extenders"), problems)

    shared_entries = decode_plugin_config(
        top.array("pluginConfig"), top.at("pluginConfig"), problems
    )
    if top.raw("pluginConfig") is not None:
        problems.warn(top.at("pluginConfig"), TOP_LEVEL_PLUGIN_CONFIG_WARNING)
    shared_args = parse_entries(shared_entries, registry, problems)

    raw_profiles = top.array("profiles") or [{}]  # kube-scheduler adds one empty profile
    top.finish()
    decoded: list[DecodedProfile] = []
    for i, raw in enumerate(raw_profiles):
        profile = decode_profile(
            raw,
            index(top.at("profiles"), i),
            registry,
            problems,
            shared_args=shared_args,
            default_name=DEFAULT_SCHEDULER_NAME if len(raw_profiles) == 1 else None,
        )
        if profile is not None:
            decoded.append(profile)
    _check_profiles(decoded, problems)

    problems.raise_if_any(filename)
    return SchedulerConfig(
        profiles=tuple(d.profile for d in decoded),
        parallelism=parallelism,
        percentage_of_nodes_to_score=percentage,
        pod_initial_backoff_seconds=initial_backoff,
        pod_max_backoff_seconds=max_backoff,
        client_connection=client,
        leader_election=leader,
        delay_cache_until_active=delay_cache,
        extenders=extenders,
        warnings=problems.warnings,
    )


# What clientConnection.contentType may name: the protobuf default (Bindings and Events go
# as protobuf, the rest as JSON, see asched.client.kproto) or all-JSON.
CONTENT_TYPES = ("application/vnd.kubernetes.protobuf", "application/json")


def _client_connection(fields: Fields | None) -> ClientConnection:
    defaults = ClientConnection()
    if fields is None:
        return defaults
    # kube-scheduler replaces a 0 qps or burst by its own defaults (50, 100).
    qps = fields.number("qps", 0.0) or defaults.qps
    burst = fields.integer("burst", 0) or defaults.burst
    if burst < 0:
        fields.error("burst", f"{burst}: must be non-negative")
    content_type = fields.text("contentType") or defaults.content_type
    if content_type not in CONTENT_TYPES:
        fields.error(
            "contentType",
            f"{content_type!r}: asched writes {' or '.join(map(repr, CONTENT_TYPES))}",
        )
    config = ClientConnection(
        kubeconfig=fields.text("kubeconfig"),
        qps=qps,
        burst=burst,
        accept_content_types=fields.text("acceptContentTypes"),
        content_type=content_type,
    )
    fields.finish()
    return config


def _leader_election(fields: Fields | None, problems: Problems) -> LeaderElection:
    """component-base LeaderElectionConfiguration, defaulted and validated like it."""
    defaults = LeaderElection()
    if fields is None:
        return defaults
    config = LeaderElection(
        leader_elect=fields.flag("leaderElect", defaults.leader_elect),
        lease_duration=fields.duration("leaseDuration", defaults.lease_duration),
        renew_deadline=fields.duration("renewDeadline", defaults.renew_deadline),
        retry_period=fields.duration("retryPeriod", defaults.retry_period),
        resource_lock=fields.text("resourceLock") or defaults.resource_lock,
        resource_name=fields.text("resourceName") or defaults.resource_name,
        resource_namespace=fields.text("resourceNamespace") or defaults.resource_namespace,
    )
    fields.finish()
    if not config.leader_elect:
        return config
    for key, value in (
        ("leaseDuration", config.lease_duration),
        ("renewDeadline", config.renew_deadline),
        ("retryPeriod", config.retry_period),
    ):
        if value <= 0:
            fields.error(key, "must be greater than zero")
    if config.lease_duration < config.renew_deadline:
        fields.error("leaseDuration", "must be greater than renewDeadline")
    if config.resource_lock != "leases":
        fields.error("resourceLock", 'must be "leases"')
    return config


def _unsupported_top_level(top: Fields, problems: Problems) -> None:
    """Known v1 fields asched does not implement: harmless ones warned, others refused."""
    for key in ("enableProfiling", "enableContentionProfiling"):
        if top.flag(key, False):
            problems.warn(top.at(key), "ignored: asched serves no profiling endpoints")
    if top.raw("percentageOfPlacementsToScore") is not None:
        top.error(
            "percentageOfPlacementsToScore",
            "not supported by asched (pod-group placement scheduling)",
        )


def _check_profiles(profiles: list[DecodedProfile], problems: Problems) -> None:
    """Names unique; one queueSort plugin, with the same args, shared by every profile."""
    first_by_name: dict[str, str] = {}
    for decoded in profiles:
        name = decoded.profile.scheduler_name
        if not name:
            continue  # already reported as required
        if name in first_by_name:
            problems.error(
                f"{decoded.path}.schedulerName",
                f'duplicate value "{name}" (also {first_by_name[name]})',
            )
        else:
            first_by_name[name] = decoded.path
    if not profiles:
        return
    # kube-scheduler compares the merged queueSort sets as written; we compare the resolved
    # plugin, so spelling the default PrioritySort out in one profile only is not an error.
    first = profiles[0].profile
    canon = first.enabled("queueSort")
    for decoded in profiles[1:]:
        queue_sort = decoded.profile.enabled("queueSort")
        if queue_sort != canon:
            problems.error(
                decoded.queue_sort_path,
                f"must be the same for all profiles: {list(queue_sort)} here, "
                f"{list(canon)} in {profiles[0].path}",
            )
        elif len(canon) == 1 and (
            decoded.profile.plugin_args.get(canon[0]) != first.plugin_args.get(canon[0])
        ):
            problems.error(
                f"{decoded.path}.pluginConfig",
                f"args of queueSort plugin {canon[0]} must be the same for all profiles",
            )
