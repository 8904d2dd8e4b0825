"""The configured extenders, run at the points kube-scheduler runs them.

- `filter`: findNodesThatPassExtenders. After the Filter plugins, each interested filter
  extender in turn gets the nodes the previous one kept; its failed nodes get statuses
  (failedAndUnresolvableNodes winning over failedNodes); an error fails the pod unless
  the extender is ignorable.
- `prioritize`: the extender half of prioritizeNodes. Interested prioritizers are asked
  concurrently; each score becomes score x weight x (MaxNodeScore / MaxExtenderPriority)
  and is added to the node's total; an error only loses that extender's scores.
- `bind`: extendersBinding. The first binder interested in the pod binds it instead of
  the Bind plugins; an ignorable binder's error passes the turn to the next.
- `preempt`: callExtenders of the preemption evaluator; each interested extender that
  preempts narrows the candidates (node -> victims) for the next one.
Ignorable extenders come after the others (buildExtenders), whatever the file's order.
Every call awaits the network with the extender's httpTimeout as its deadline; the
scheduling cycle waits for it, as kube-scheduler's does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio
import structlog

from asched.api import Pod
from asched.extender.extender import HTTPExtender
from asched.extender.wire import MAX_EXTENDER_PRIORITY
from asched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from asched.framework.extenders import ExtenderError, Victims
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.framework.types import MAX_NODE_SCORE, NodeToStatus

log = structlog.get_logger(__name__)

# framework.ExtenderName: the pseudo-plugin a pod is filed under when an extender
# rejected nodes, so that any cluster event retries it.
EXTENDER_NAME = "Extender"
# What it registers for: every event (kube-scheduler's defaultEnqueueExtension).
EXTENDER_EVENTS = (ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "*")),)


@dataclass(slots=True)
class ExtenderScores:
    """What the prioritizers added: per node, the total and each extender's part."""

    totals: dict[str, int] = field(default_factory=dict)
    parts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def add(self, extender: str, node: str, score: int) -> None:
        self.totals[node] = self.totals.get(node, 0) + score
        self.parts.setdefault(node, []).append((extender, score))


class Extenders:
    """The scheduler's extenders, in kube-scheduler's order (ignorable ones last)."""

    def __init__(self, extenders: Sequence[HTTPExtender]) -> None:
        self.all: tuple[HTTPExtender, ...] = tuple(
            [e for e in extenders if not e.ignorable] + [e for e in extenders if e.ignorable]
        )
        self.has_filters = any(e.is_filter for e in self.all)
        self.has_prioritizers = any(e.is_prioritizer for e in self.all)

    def __bool__(self) -> bool:
        return bool(self.all)

    async def filter(
        self, pod: Pod, feasible: list[NodeInfo], statuses: NodeToStatus
    ) -> list[NodeInfo]:
        """findNodesThatPassExtenders; raises ExtenderError for a non-ignorable failure."""
        for ext in self.all:
            if not feasible:
                break
            if not ext.is_interested(pod):
                continue
            try:
                kept, failed, unresolvable = await ext.filter(pod, feasible)
            except ExtenderError as exc:
                if ext.ignorable:
                    log.info("extender_skipped", extender=ext.name, pod=pod.key, error=str(exc))
                    continue
                raise
            for name, msg in unresolvable.items():
                statuses.set(name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)))
            for name, msg in failed.items():
                if name not in unresolvable:
                    statuses.set(name, Status(Code.UNSCHEDULABLE, (msg,)))
            feasible = kept
        return feasible

    async def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> ExtenderScores:
        """The extenders' weighted scores by node name (prioritizeNodes)."""
        scores = ExtenderScores()
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY

        async def one(ext: HTTPExtender) -> None:
            try:
                listed = await ext.prioritize(pod, nodes)
            except ExtenderError as exc:
                # Go logs this at V(5) and carries on without the extender's scores.
                log.debug(
                    "extender_prioritize_failed", extender=ext.name, pod=pod.key, error=str(exc)
                )
                return
            for host, score in listed:
                scores.add(ext.name, host, score * ext.weight * scale)

        async with anyio.create_task_group() as tg:
            for ext in self.all:
                if ext.is_interested(pod):
                    tg.start_soon(one, ext)
        return scores

    async def bind(self, pod: Pod, node: str) -> tuple[bool, ExtenderError | None]:
        """extendersBinding: (whether an extender took the bind, its error if it failed)."""
        for ext in self.all:
            if not ext.is_binder or not ext.is_interested(pod):
                continue
            try:
                await ext.bind(pod, node)
            except ExtenderError as exc:
                if ext.ignorable:
                    log.info(
                        "extender_bind_skipped", extender=ext.name, pod=pod.key, error=str(exc)
                    )
                    continue
                return True, exc
            return True, None
        return False, None

    async def preempt(
        self,
        pod: Pod,
        victims: dict[str, Victims],
        node_pods: Callable[[str], Sequence[Pod] | None],
    ) -> dict[str, Victims]:
        """callExtenders: the candidates left once every preempting extender has had its
        say; raises ExtenderError where kube-scheduler returns an error status."""
        for ext in self.all:
            if not ext.supports_preemption or not ext.is_interested(pod):
                continue
            try:
                answer = await ext.process_preemption(pod, victims, node_pods)
            except ExtenderError as exc:
                if ext.ignorable:
                    log.info(
                        "extender_preempt_skipped", extender=ext.name, pod=pod.key, error=str(exc)
                    )
                    continue
                raise
            kept: dict[str, Victims] = {}
            for node, v in answer.items():
                if v is None or not v[0]:
                    if ext.ignorable:
                        continue
                    raise ExtenderError(f'expected at least one victim pod on node "{node}"')
                kept[node] = v
            victims = kept
            if not victims:
                break
        return victims

    async def close(self) -> None:
        for ext in self.all:
            await ext.close()
