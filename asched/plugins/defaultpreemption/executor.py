"""Carrying out a preemption: evict the chosen node's victims, then release the node.

Executor.prepareCandidateAsync (SchedulerAsyncPreemption, beta and on in 1.37; Go's
synchronous prepareCandidate, for the gate off, is not kept):
- PostFilter only records the preemptor and hands the work to
  `run()`, the plugin's background task; it clears the lower-priority nominations on the
  node, preempts every victim but the last concurrently, then the last (skipped when an
  earlier one failed), and forgets the preemptor. Until then DefaultPreemption's
  PreEnqueue holds the preemptor back (is_running: true while the work is pending, and
  while the last victim exists and is not yet terminating, which closes the race of its
  deletion event arriving before the work ends). A failure, or a last victim preempted
  only in memory (no deletion event will come), activates the preemptor.
- A pod group's preemption takes the same path (actuatePodGroupPreemption): the group's
  uid is recorded, PreEnqueue holds back every member, and all members are activated.
- The victims but the last are preempted at most `handle.parallelism` API calls at a
  time; the first failure cancels the rest.
Per victim (Executor.PreemptPod):
- a victim already terminating gets no API call (its graceful deletion is under way);
- a victim waiting at Permit is rejected there ("preempted") instead of deleted, and a
  victim whose PreBind runs is cancelled there (CancelPod: its binding fails with
  "preempted by DefaultPreemption");
- otherwise its status gets the condition DisruptionTarget=True, reason
  PreemptionByScheduler, then it is deleted; a victim that is already gone (404) is
  done, without an event;
- each preempted victim gets the Normal event `Preempted` / `Preempting`:
  "Preempted by pod <preemptor uid> on node <node>", plus " (in asched memory)." for
  a victim rejected at Permit or cancelled in PreBind (kube-scheduler says
  "kube-scheduler" there).
asched adds the victim's uid as a precondition to both calls, so a pod recreated under the
same name (a StatefulSet replica) is never evicted by mistake; a precondition conflict
(409) means the victim we chose is gone, like a 404.
Before the victims, pods of lower priority nominated to the node lose their nomination
(status.nominatedNodeName cleared), so they look elsewhere at once; failures there are
logged, not returned (upstream: "not critical").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import anyio
import structlog

from asched.api import Pod
from asched.api.meta import rfc3339
from asched.client.protocol import REQUEST_ERRORS, ApiError, failure_fields
from asched.framework.handle import Handle
from asched.framework.status import Code, Status
from asched.plugins.defaultpreemption.candidates import Candidate

log = structlog.get_logger(__name__)

# Where kube-scheduler's messages name itself, asched says its own name.
SCHEDULER_NAME = "asched"

DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"


def _pod_path(pod: Pod) -> str:
    return f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"


def _gone(exc: ApiError) -> bool:
    return exc.not_found or exc.conflict


@dataclass(frozen=True, slots=True)
class _Job:
    """One asynchronous preemption: the candidate's victims still to preempt, who
    preempts (`kind`, `uid`: a pod, or a pod group) and the pods to activate if no
    deletion event will requeue them (ExecutorPreemptor.Pods)."""

    candidate: Candidate
    preemptor: Pod
    victims: tuple[Pod, ...]
    kind: str
    uid: str
    pods: tuple[Pod, ...]


class Executor:
    def __init__(self, handle: Handle, plugin_name: str) -> None:
        self._handle = handle
        self._plugin = plugin_name
        # Preemptors whose asynchronous preemption is under way (Go's `preempting`), and
        # the last victim of each once its turn has come (lastVictimsPendingPreemption).
        self._preempting: set[str] = set()
        self._last_victim: dict[str, tuple[str, str]] = {}
        # namespace/name of a pod group -> its uid, while its preemption runs (Go reads
        # the uid from the PodGroup lister in PreEnqueue).
        self._groups: dict[str, str] = {}
        self._jobs: deque[_Job] = deque()
        self._wake = anyio.Event()
        self._active = 0

    @property
    def busy(self) -> bool:
        """Asynchronous preemptions are queued or under way."""
        return bool(self._jobs) or self._active > 0

    # ---- asynchronous path -----------------------------------------------------------
    def is_running(self, uid: str) -> bool:
        """isRunningPreemption: the preemptor's preemption is pending, or its last victim
        still exists and is not terminating."""
        if uid not in self._preempting:
            return False
        last = self._last_victim.get(uid)
        if last is None:
            return True
        namespace, name = last
        victim = next(
            (p for p in self._handle.pods_in_namespace(namespace) if p.name == name), None
        )
        return victim is not None and victim.deletion_timestamp is None

    def group_running(self, namespace: str, name: str) -> bool:
        """IsPodGroupRunningPreemption, for the group a member names."""
        uid = self._groups.get(f"{namespace}/{name}")
        return uid is not None and self.is_running(uid)

    def prepare_candidate_async(
        self,
        candidate: Candidate,
        preemptor: Pod,
        *,
        group: tuple[str, str] | None = None,
        pods: Sequence[Pod] = (),
        kind: str = "podgroup",
        held: Sequence[str] = (),
    ) -> None:
        """prepareCandidateAsync: record the preemptor and queue the work for run().

        For a pod group (actuatePodGroupPreemption) `group` is its (key, uid), `preemptor`
        one of its members carrying the group's priority, and `pods` its members; `kind`
        is how the victims' event names it ("podgroup", or "compositepodgroup" for a
        CompositePodGroup root, whose PodGroups' keys are `held`: their members wait for
        this preemption as a group's do)."""
        victims = tuple(v for v in candidate.victims if v.deletion_timestamp is None)
        if not victims:
            return  # every victim is terminating already: nothing to wait for
        members: tuple[Pod, ...]
        if group is None:
            kind, uid, members = "pod", preemptor.uid, (preemptor,)
        else:
            key, uid = group
            members = tuple(pods)
            for k in (key, *held):
                self._groups[k] = uid
        self._preempting.add(uid)
        self._jobs.append(_Job(candidate, preemptor, victims, kind, uid, members))
        self._wake.set()

    async def run(self) -> None:
        """The asynchronous preemptions, each its own task of this group."""
        async with anyio.create_task_group() as tg:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self._jobs:
                    self._active += 1  # counted from here, so `busy` never blinks
                    tg.start_soon(self._execute, self._jobs.popleft())

    async def _execute(self, job: _Job) -> None:
        preemptor, node = job.preemptor, job.candidate.node_name
        uid, by = job.uid, f"{job.kind} {job.uid}"
        failed = last_in_memory = False
        try:
            # Lower-priority pods nominated here may no longer fit: let them look elsewhere
            # at once rather than after the victims are gone.
            await self._clear_lower_nominations(preemptor, node)
            if len(job.victims) > 1:
                failed = await self._preempt_all(node, preemptor, job.victims[:-1], by) is not None
            if not failed:
                last = job.victims[-1]
                self._last_victim[uid] = (last.namespace, last.name)
                try:
                    last_in_memory = await self._preempt(node, preemptor, last, by)
                except REQUEST_ERRORS as exc:
                    self._log_failure(preemptor, last, node, exc)
                    failed = True
        finally:
            self._active -= 1
            self._preempting.discard(uid)
            self._last_victim.pop(uid, None)
            for key in [k for k, v in self._groups.items() if v == uid]:
                del self._groups[key]
        log.info(
            "async_preemption_finished", preemptor=f"{job.kind} {uid}", node=node, failed=failed
        )
        if failed or last_in_memory:
            # No victim's deletion will requeue the preemptor: do it here.
            self._handle.activate(job.pods)

    async def _preempt_all(
        self, node: str, preemptor: Pod, victims: Sequence[Pod], by: str
    ) -> Status | None:
        """Preempt the victims concurrently, at most `parallelism` calls in flight; the
        first failure cancels the rest and is returned."""
        failures: list[Status] = []
        todo: Iterator[Pod] = iter(victims)
        async with anyio.create_task_group() as tg:

            async def worker() -> None:
                # Workers share one iterator: at most `parallelism` calls in flight.
                for victim in todo:
                    try:
                        await self._preempt(node, preemptor, victim, by)
                    except REQUEST_ERRORS as exc:
                        self._log_failure(preemptor, victim, node, exc)
                        failures.append(Status(Code.ERROR, (str(exc),), self._plugin, exc))
                        tg.cancel_scope.cancel()
                        return

            for _ in range(min(max(self._handle.parallelism, 1), len(victims))):
                tg.start_soon(worker)
        return failures[0] if failures else None

    def _log_failure(self, preemptor: Pod, victim: Pod, node: str, exc: Exception) -> None:
        log.warning(
            "preemption_failed",
            preemptor=preemptor.key,
            victim=victim.key,
            node=node,
            **failure_fields(exc),
        )

    async def _preempt(self, node: str, preemptor: Pod, victim: Pod, by: str) -> bool:
        """PreemptPod; True when the victim was preempted in memory (rejected at Permit or
        cancelled in PreBind)."""
        h = self._handle
        in_memory = False
        message = f"Preempted by {by} on node {node}"
        binding = h.pods_in_pre_bind.get(victim.uid)
        if h.waiting_pods.reject(victim.uid, self._plugin, "preempted"):
            log.info("preempted_waiting_pod", preemptor=preemptor.key, victim=victim.key, node=node)
            in_memory = True
        elif binding is not None and binding.cancel(f"preempted by {self._plugin}"):
            # CancelPod: the victim's PreBind stops and its binding fails; no deletion.
            log.info("preempted_pod_in_pre_bind", preemptor=preemptor.key, victim=victim.key)
            in_memory = True
        if in_memory:
            # Executor.PreemptPod marks a victim preempted only in memory (rejected at
            # Permit or in PreBind, never deleted) with this suffix; Go names itself, so
            # asched does.
            message += f" (in {SCHEDULER_NAME} memory)."
        else:
            kind = by.partition(" ")[0]
            if not await self._mark_disruption_target(preemptor, victim, kind):
                return False
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
                return False
            log.info("victim_preempted", preemptor=preemptor.key, victim=victim.key, node=node)
        h.events.event(
            victim,
            "Normal",
            "Preempted",
            "Preempting",
            message,
        )
        return in_memory

    async def _mark_disruption_target(self, preemptor: Pod, victim: Pod, kind: str) -> bool:
        """Add DisruptionTarget to the victim's conditions; False when the victim is gone.
        `kind` names the preemptor as Go's preemptor.Type() does (pod, podgroup,
        compositepodgroup)."""
        condition = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher "
            f"priority {kind}",
            "lastTransitionTime": rfc3339(self._handle.clock.wall()),
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
            except REQUEST_ERRORS as exc:
                log.warning(
                    "clear_nominated_node_failed", pod=p.key, node=node, **failure_fields(exc)
                )
