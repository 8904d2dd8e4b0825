"""Coscheduling (gang scheduling) for scheduler-plugins' PodGroup API.

plugin.py is the thin adapter registered as `Coscheduling`; manager.py is the gang state
machine (and the deadlock-freedom argument): every transition is a GangManager method. It
owns collaborators of one job each: groups.py (the book: PodGroups, per-group state,
censuses), gate.py (the reservation gate), ledger.py (failure, backoff, events, status
marks), timers.py, capacity.py (cluster totals, "can never fit"); status.py writes PodGroup
status in batches.
"""

from asched.framework.registry import PluginSpec
from asched.plugins.coscheduling.groups import PODGROUP_INFORMER
from asched.plugins.coscheduling.manager import GangManager
from asched.plugins.coscheduling.plugin import NAME, Coscheduling, CoschedulingArgs
from asched.plugins.coscheduling.status import PodGroupStatusWriter

SPEC = PluginSpec(NAME, Coscheduling, CoschedulingArgs)

__all__ = [
    "NAME",
    "PODGROUP_INFORMER",
    "SPEC",
    "Coscheduling",
    "CoschedulingArgs",
    "GangManager",
    "PodGroupStatusWriter",
]
