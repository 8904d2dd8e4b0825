"""KubeSchedulerConfiguration: load, default, merge and validate it, as kube-scheduler does.

    from asched.config import ConfigError, load_config
    from asched.plugins.registry import in_tree_registry

    try:
        config = load_config(Path("scheduler.yaml"), in_tree_registry())
    except ConfigError as err:
        for path, message in err.problems:   # every problem, not just the first
            print(f"{path}: {message}")
    else:
        profile = config.profile("default-scheduler")
        profile.enabled("filter")            # ('NodeUnschedulable', 'NodeName', ...)
        profile.score_weights()              # {'TaintToleration': 3, 'NodeAffinity': 2, ...}
        profile.plugin_args["NodeResourcesFit"]   # the plugin's own validated args object
        config.warnings                      # accepted deviations (v1beta3, ...)

The result is final: defaults applied, plugin sets merged and expanded per extension point,
score weights resolved, every plugin's args parsed by its own Args type.
"""

from asched.base.durations import DurationError, parse_duration
from asched.config.errors import ConfigError
from asched.config.loader import default_config, load_config
from asched.config.model import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    ClientConnection,
    ExtenderConfig,
    ExtenderTLS,
    LeaderElection,
    ManagedResource,
    PluginRef,
    Profile,
    SchedulerConfig,
)
from asched.config.plugin_sets import DEFAULT_PLUGINS

__all__ = [
    "API_VERSION",
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "ClientConnection",
    "ConfigError",
    "DurationError",
    "ExtenderConfig",
    "ExtenderTLS",
    "LeaderElection",
    "ManagedResource",
    "PluginRef",
    "Profile",
    "SchedulerConfig",
    "default_config",
    "load_config",
    "parse_duration",
]
