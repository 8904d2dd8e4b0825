"""Coscheduling (gang scheduling) for scheduler-plugins' PodGroup API.

plugin.py is the thin adapter registered as `Coscheduling`; manager.py holds the gang state
machine (and the deadlock-freedom argument), built in layers of one job each: groups.py
(state, lookups), bookkeeping.py (failure, backoff, events), reservation.py (PostFilter,
Permit, Unreserve, the reservation gate), admission.py (QueueSort, PreEnqueue, PreFilter,
queueing hints); status.py writes PodGroup status in batches.
"""

from asched.framework.registry import PluginSpec
from asched.plugins.coscheduling.manager import PODGROUP_INFORMER, GangManager
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
