"""What the framework's plugins may ask of the scheduler's extenders: preemption.

kube-scheduler's preemption Evaluator reaches the extenders through its Handle
(Handler.Extenders()) and lets each one that preempts narrow the candidates
(callExtenders). The extenders live above the plugins (asched.extender), so the plugins
see them only through this contract; a handle offers it when it is a `HasExtenders` and
its `extenders` is not None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from asched.api import Pod

# Victims of one node: the pods, and how many PodDisruptionBudgets evicting them violates.
Victims = tuple[list[Pod], int]


class ExtenderError(Exception):
    """A call to an extender failed; the message is what kube-scheduler would report."""


class PreemptionExtenders(Protocol):
    async def preempt(
        self,
        pod: Pod,
        victims: dict[str, Victims],
        node_pods: Callable[[str], Sequence[Pod] | None],
    ) -> dict[str, Victims]:
        """Called by preemption once candidates were found, before one is picked: the
        candidates (node -> victims) that remain after every interested extender with a
        preempt verb had its say. `node_pods` holds the pods on each node, to turn the
        extenders' victim UIDs back into pods. Raises ExtenderError when an extender
        that is not ignorable failed; the preemption then ends in an Error status."""
        ...


@runtime_checkable
class HasExtenders(Protocol):
    @property
    def extenders(self) -> PreemptionExtenders | None:
        """The scheduler's extenders, or None when none are configured."""
        ...
