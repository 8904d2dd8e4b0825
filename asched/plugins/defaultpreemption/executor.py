"""Carrying out a preemption: evict the chosen node's victims, then release the node.

Mirrors kube-scheduler's preemption Executor.prepareCandidate (the synchronous path, used
when the SchedulerAsyncPreemption gate is off): the victims are preempted concurrently,
at most `handle.parallelism` API calls at a time, inside PostFilter; the first failure
cancels the rest and becomes the PostFilter's Error. Per victim (Executor.PreemptPod):
- a victim already terminating gets no API call (its graceful deletion is under way);
- a victim waiting at Permit is rejected there ("preempted") instead of deleted;
- otherwise its status gets the condition DisruptionTarget=True, reason
  PreemptionByScheduler, then it is deleted; a victim that is already gone (404) is
  done, without an event;
- each preempted victim gets the Normal event `Preempted` / `Preempting`:
  "Preempted by pod <preemptor uid> on node <node>", plus " (in asched memory)." for
  a victim rejected at Permit (kube-scheduler says "kube-scheduler" there).
asched adds the victim's uid as a precondition to both calls, so a pod recreated under the
same name (a StatefulSet replica) is never evicted by mistake; a precondition conflict
(409) means the victim we chose is gone, like a 404.
Afterwards, pods of lower priority nominated to the node lose their nomination
(status.nominatedNodeName cleared), so they look elsewhere at once; failures there are
logged, not returned (upstream: "not critical").
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import anyio
import structlog

from asched.api import Pod
from asched.client.protocol import ApiError, TransportError
from asched.framework.handle import Handle
from asched.framework.status import Code, Status
from asched.plugins.defaultpreemption.candidates import Candidate

log = structlog.get_logger(__name__)

# Where kube-scheduler's messages name itself, asched says its own name.
SCHEDULER_NAME = "asched"

DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod_path(pod: Pod) -> str:
    return f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"


def _gone(exc: ApiError) -> bool:
    return exc.not_found or exc.conflict


class Executor:
    def __init__(self, handle: Handle, plugin_name: str) -> None:
        self._handle = handle
        self._plugin = plugin_name

    async def prepare_candidate(
        self, candidate: Candidate, preemptor: Pod, *, by: tuple[str, str] | None = None
    ) -> Status | None:
        """Preempt the candidate's victims; an Error status if any of them failed.

        `by` is the preemptor as the victims' event names it, (type, uid): a pod group
        preempts as ("podgroup", its uid) on the candidate "cluster"
        (actuatePodGroupPreemption, podGroupExecutorPreemptor); `preemptor` is then one
        of its members carrying the group's priority and scheduler name.
        """
        kind, uid = by or ("pod", preemptor.uid)
        node = candidate.node_name
        victims = []
        for v in candidate.victims:
            if v.deletion_timestamp is not None:
                log.debug(
                    "victim_already_terminating", preemptor=preemptor.key, victim=v.key, node=node
                )
            else:
                victims.append(v)
        failures: list[Status] = []
        if victims:
            todo: Iterator[Pod] = iter(victims)
            async with anyio.create_task_group() as tg:

                async def worker() -> None:
                    # Workers share one iterator: at most `parallelism` calls in flight.
                    for victim in todo:
                        try:
                            await self._preempt(node, preemptor, victim, f"{kind} {uid}")
                        except (ApiError, TransportError) as exc:
                            log.warning(
                                "preemption_failed",
                                preemptor=preemptor.key,
                                victim=victim.key,
                                node=node,
                                error=str(exc),
                            )
                            failures.append(Status(Code.ERROR, (str(exc),), self._plugin, exc))
                            tg.cancel_scope.cancel()
                            return

                for _ in range(min(max(self._handle.parallelism, 1), len(victims))):
                    tg.start_soon(worker)
        if failures:
            return failures[0]
        await self._clear_lower_nominations(preemptor, node)
        return None

    async def _preempt(self, node: str, preemptor: Pod, victim: Pod, by: str) -> None:
        h = self._handle
        message = f"Preempted by {by} on node {node}"
        if h.waiting_pods.reject(victim.uid, self._plugin, "preempted"):
            log.info("preempted_waiting_pod", preemptor=preemptor.key, victim=victim.key, node=node)
            # Executor.PreemptPod marks a victim preempted only in memory (rejected at
            # Permit, never deleted) with this suffix; Go names itself, so asched does.
            message += f" (in {SCHEDULER_NAME} memory)."
        else:
            if not await self._mark_disruption_target(preemptor, victim):
                return
            try:
                await h.client.request(
                    "DELETE",
                    _pod_path(victim),
                    body={
                        "apiVersion": "v1",
                        "kind": "DeleteOptions",
                        "preconditions": {"uid": victim.uid},
                    },
                )
            except ApiError as exc:
                if not _gone(exc):
                    raise
                log.info(
                    "victim_already_deleted", preemptor=preemptor.key, victim=victim.key, node=node
                )
                return
            log.info("victim_preempted", preemptor=preemptor.key, victim=victim.key, node=node)
        h.events.event(
            victim,
            "Normal",
            "Preempted",
            "Preempting",
            message,
        )

    async def _mark_disruption_target(self, preemptor: Pod, victim: Pod) -> bool:
        """Add DisruptionTarget to the victim's conditions; False when the victim is gone."""
        condition = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher "
            "priority pod",
            "lastTransitionTime": _rfc3339(self._handle.clock.wall()),
        }
        try:
            await self._handle.client.request(
                "PATCH",
                f"{_pod_path(victim)}/status",
                body={"metadata": {"uid": victim.uid}, "status": {"conditions": [condition]}},
                content_type=STRATEGIC_MERGE_PATCH,
            )
        except ApiError as exc:
            if not _gone(exc):
                raise
            log.info("victim_already_deleted", preemptor=preemptor.key, victim=victim.key)
            return False
        return True

    async def _clear_lower_nominations(self, preemptor: Pod, node: str) -> None:
        # Only pods whose status carries the nomination are patched (upstream's path
        # without the API cacher); in-memory nominations follow the informer's update.
        for p in self._handle.nominated_pods_for_node(node):
            if p.priority >= preemptor.priority or not p.nominated_node_name:
                continue
            try:
                await self._handle.client.request(
                    "PATCH",
                    f"{_pod_path(p)}/status",
                    body={"metadata": {"uid": p.uid}, "status": {"nominatedNodeName": None}},
                    content_type=STRATEGIC_MERGE_PATCH,
                )
            except (ApiError, TransportError) as exc:
                log.warning("clear_nominated_node_failed", pod=p.key, node=node, error=str(exc))
