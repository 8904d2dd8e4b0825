"""The reservation gate: at most one PodGroup at a time holds a partial reservation.

A group takes the gate when one of its members parks at Permit without a quorum and keeps
it until the quorum is reached or the group is rejected; pods of other groups that would
have to wait at Permit are turned away meanwhile and activated when the gate frees. The
argument for why this makes gangs deadlock-free is in manager.py. The gate only keeps
this record; GangManager decides when it is taken, released and taken back.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from asched.api import Pod
from asched.plugins.coscheduling.state import Gate
from asched.plugins.coscheduling.timers import Timers

# How long past its Permit timeout a gate may be held before it is taken back.
GATE_GRACE_SECONDS = 5.0


class ReservationGate:
    def __init__(self, timers: Timers, activate: Callable[[Sequence[Pod]], None]) -> None:
        self._timers = timers
        self._activate = activate
        self._gate: Gate | None = None
        # A fired expiry timer acts only on the holding it was set for.
        self._tokens = itertools.count(1)
        # Pods turned away while the gate was held (uid -> pod), activated when it frees.
        self._waiters: dict[str, Pod] = {}

    @property
    def holder(self) -> str:
        """The holding group's key, "" when the gate is free."""
        return self._gate.group if self._gate is not None else ""

    @property
    def held(self) -> Gate | None:
        return self._gate

    def take(self, key: str, timeout: float, now: float) -> None:
        """`key` parks a member without a quorum; the gate expires after its Permit timeout."""
        token = next(self._tokens)
        self._gate = Gate(key, token, now + timeout + GATE_GRACE_SECONDS)
        self._timers.add(self._gate.expires, "gate", key, token)

    def turn_away(self, pod: Pod) -> None:
        """`pod` may not wait at Permit while another group holds the gate."""
        self._waiters[pod.uid] = pod

    def release(self, key: str) -> bool:
        """Free the gate if `key` holds it, activating the pods it turned away."""
        if self._gate is None or self._gate.group != key:
            return False
        self._gate = None
        if self._waiters:
            pods = list(self._waiters.values())
            self._waiters.clear()
            self._activate(pods)
        return True

    def waiters(self) -> list[str]:
        return sorted(p.key for p in self._waiters.values())
