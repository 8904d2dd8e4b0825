"""PrioritySort, the default QueueSort plugin."""

from asched.plugins.queuesort.priority_sort import NAME, SPEC, PrioritySort

__all__ = ["NAME", "SPEC", "PrioritySort"]
