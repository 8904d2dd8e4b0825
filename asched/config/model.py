"""The loaded scheduler configuration: what the rest of asched reads, fully resolved.

Everything here is final: defaults applied, plugin sets merged and expanded per extension
point in kube-scheduler's order, score weights resolved, plugin args parsed and validated.
Nothing downstream needs to know about multiPoint, `disabled` lists or raw YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from asched.framework.points import ExtensionPoint

# The profile extension points in the config's spelling, in the order a pod meets them.
EXTENSION_POINTS: tuple[str, ...] = tuple(ExtensionPoint)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


class PluginRef(NamedTuple):
    """A plugin enabled at one extension point.

    `weight` is meaningful only at `score` and `placementScore`, where it is already
    resolved (never 0: kube-scheduler reads an unset or 0 weight as 1); it is 0 at every
    other point.
    A NamedTuple, so it is also the `(name, weight)` pair the framework runtime takes.
    """

    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class ClientConnection:
    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True, slots=True)
class LeaderElection:
    """Durations are seconds (the file spells them as Go durations, "15s")."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    # Deliberately not kube-scheduler's Lease name: asched running beside kube-scheduler
    # (a second profile set, a benchmark) must never take over kube-scheduler's Lease.
    resource_name: str = "asched"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True)
class ExtenderTLS:
    """ExtenderTLSConfig: the `*Data` fields (PEM bytes) win over the `*File` ones."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = field(default=b"", repr=False)
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True)
class ManagedResource:
    """ExtenderManagedResource: an extended resource the extender manages."""

    name: str
    ignored_by_scheduler: bool = False


# kube-scheduler's DefaultExtenderTimeout, used when httpTimeout is unset or 0.
DEFAULT_EXTENDER_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    """One entry of `extenders` (config/v1 Extender), defaulted; verbs are "" when the
    extender does not implement them. `http_timeout` is seconds, never 0."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls: ExtenderTLS | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class Profile:
    """One scheduling profile, selected by a pod's `spec.schedulerName`.

    `plugins` has exactly the keys of EXTENSION_POINTS, each the final ordered list.
    `plugin_args` holds the parsed args object (or None for plugins without args) of every
    plugin the profile enables anywhere, defaulted when pluginConfig does not mention it.
    `percentage_of_nodes_to_score` is None when the profile inherits the global value.
    """

    scheduler_name: str
    plugins: Mapping[str, tuple[PluginRef, ...]]
    plugin_args: Mapping[str, Any] = field(default_factory=lambda: _frozen({}))
    percentage_of_nodes_to_score: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "plugins", _frozen(self.plugins))
        object.__setattr__(self, "plugin_args", _frozen(self.plugin_args))

    def enabled(self, point: str) -> tuple[str, ...]:
        """Plugin names at one extension point, in run order."""
        return tuple(ref.name for ref in self.plugins[point])

    def score_weights(self) -> Mapping[str, int]:
        return {ref.name: ref.weight for ref in self.plugins["score"]}


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """A whole KubeSchedulerConfiguration; `warnings` lists accepted deviations."""

    profiles: tuple[Profile, ...]
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive, as kube-scheduler
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    delay_cache_until_active: bool = False
    extenders: tuple[ExtenderConfig, ...] = ()
    warnings: tuple[str, ...] = ()

    def profile(self, scheduler_name: str) -> Profile | None:
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        return None
