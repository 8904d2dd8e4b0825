"""From the config's `extenders` to running clients: kube-scheduler's buildExtenders.

Besides making one HTTPExtender per entry (ignorable ones ordered last, by Extenders),
buildExtenders hands every managed resource marked ignoredByScheduler to each profile's
NodeResourcesFit as its ignoredResources, replacing what the profile's pluginConfig
said there, so Filter does not refuse a node for lacking a resource the extender
accounts for itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from asched.config.model import ExtenderConfig
from asched.extender.chain import Extenders
from asched.extender.extender import HTTPExtender
from asched.extender.objects import WireObjects
from asched.extender.transport import ExtenderSetupError, Transport
from asched.framework.runtime import ProfileSpec
from asched.plugins.noderesources.args import FitArgs
from asched.plugins.noderesources.fit import NAME as FIT


def build_extenders(configs: Sequence[ExtenderConfig], objects: WireObjects) -> Extenders:
    """The clients; ExtenderSetupError (a StartupError) when one cannot be made."""
    return Extenders([HTTPExtender(c, Transport(c), objects) for c in configs])


def with_ignored_resources(
    profiles: Sequence[ProfileSpec], configs: Sequence[ExtenderConfig]
) -> list[ProfileSpec]:
    """*profiles* with NodeResourcesFit's ignoredResources set as buildExtenders sets them
    (unchanged when no managed resource is ignoredByScheduler)."""
    ignored = tuple(r.name for c in configs for r in c.managed_resources if r.ignored_by_scheduler)
    if not ignored:
        return list(profiles)
    out = []
    for p in profiles:
        args = p.plugin_args.get(FIT)
        if not isinstance(args, FitArgs):
            raise ExtenderSetupError(
                "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config"
            )
        plugin_args = {**p.plugin_args, FIT: dataclasses.replace(args, ignored_resources=ignored)}
        out.append(
            ProfileSpec(p.scheduler_name, p.plugins, plugin_args, p.percentage_of_nodes_to_score)
        )
    return out
