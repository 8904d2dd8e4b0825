"""From the config's `extenders` to running clients: kube-scheduler's buildExtenders.

One HTTPExtender per entry (ignorable ones ordered last, by Extenders). buildExtenders'
other half, handing the ignoredByScheduler resources to NodeResourcesFit, names a plugin
and so happens where the profiles are built (asched.app.scheduler_options).
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.config.model import ExtenderConfig
from asched.extender.chain import Extenders
from asched.extender.extender import HTTPExtender
from asched.extender.objects import WireObjects
from asched.extender.transport import Transport


def build_extenders(configs: Sequence[ExtenderConfig], objects: WireObjects) -> Extenders:
    """The clients; ExtenderSetupError (a StartupError) when one cannot be made."""
    return Extenders([HTTPExtender(c, Transport(c), objects) for c in configs])
