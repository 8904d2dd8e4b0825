"""Following the demo's pods until they settle, printing a line as each one is decided.

Polls the namespace's pods and Events (a few requests a second; plain lines, so it reads
the same without a terminal). A pod is decided when it is bound, or, for a pod the
workload expects to stay pending, when its FailedScheduling Event has arrived. The
watch ends when every pod is decided or the time is up, whichever comes first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from asched.base.clock import Clock, RealClock
from asched.demo.workload import Workload

POLL_SECONDS = 0.25
FAILED_SCHEDULING = "FailedScheduling"


class Lister(Protocol):
    """What Progress needs of a client (asched.localcluster.ClusterClient has it)."""

    async def list(self, path: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class PodState:
    name: str
    node: str = ""
    # The latest FailedScheduling Event's note ("" without one).
    failure: str = ""
    # The PodScheduled condition's message when it is False ("" otherwise).
    condition: str = ""


def _event_time(e: dict[str, Any]) -> str:
    series = e.get("series") or {}
    return str(
        series.get("lastObservedTime")
        or e.get("eventTime")
        or (e.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


def pod_states(pods: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[str, PodState]:
    """Pods and events.k8s.io/v1 Events of one namespace -> state per pod name."""
    failures: dict[str, tuple[str, str]] = {}
    for e in events:
        if e.get("reason") != FAILED_SCHEDULING:
            continue
        name = str((e.get("regarding") or {}).get("name") or "")
        when = _event_time(e)
        if name not in failures or when >= failures[name][0]:
            failures[name] = (when, str(e.get("note") or ""))
    states = {}
    for p in pods:
        name = p["metadata"]["name"]
        condition = next(
            (
                str(c.get("message") or "")
                for c in (p.get("status") or {}).get("conditions") or []
                if c.get("type") == "PodScheduled" and c.get("status") == "False"
            ),
            "",
        )
        states[name] = PodState(
            name,
            str((p.get("spec") or {}).get("nodeName") or ""),
            failures.get(name, ("", ""))[1],
            condition,
        )
    return states


def settled(workload: Workload, states: dict[str, PodState]) -> bool:
    for pod in workload.pods:
        st = states.get(pod.name)
        if st is None:
            return False
        if not (st.failure if pod.expect_pending else st.node):
            return False
    return True


async def read_states(client: Lister, namespace: str) -> dict[str, PodState]:
    pods = await client.list(f"/api/v1/namespaces/{namespace}/pods")
    events = await client.list(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
    return pod_states(pods, events)


class Progress:
    """Follows one workload; `states` and `settled` hold what the last poll saw."""

    def __init__(
        self, workload: Workload, say: Callable[[str], None], clock: Clock | None = None
    ) -> None:
        self.workload = workload
        self.say = say
        self.clock: Clock = clock or RealClock()
        self.states: dict[str, PodState] = {}
        self.settled = False
        self._reported: dict[str, PodState] = {}
        self._scheduler = {p.name: p.scheduler for p in workload.pods}

    async def follow(self, client: Lister) -> None:
        """Poll until every pod is decided, printing each decision; bound it from outside."""
        began = self.clock.now()
        while True:
            self.states = await read_states(client, self.workload.namespace)
            self._report(self.clock.now() - began)
            if settled(self.workload, self.states):
                self.settled = True
                return
            await self.clock.sleep(POLL_SECONDS)

    def _report(self, t: float) -> None:
        for name, st in self.states.items():
            seen = self._reported.get(name)
            who = self._scheduler.get(name, "?")
            if st.node and (seen is None or not seen.node):
                self.say(f"  {t:5.1f}s  {name} -> {st.node}  ({who})")
                self._reported[name] = st
            elif st.failure and not st.node and (seen is None or not seen.failure):
                self.say(f"  {t:5.1f}s  {name} is unschedulable  ({who})")
                self._reported[name] = st
