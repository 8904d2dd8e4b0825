"""SchedulingGates, the default PreEnqueue plugin."""

from asched.plugins.schedulinggates.scheduling_gates import NAME, SPEC, SchedulingGates

__all__ = ["NAME", "SPEC", "SchedulingGates"]
