"""The Scheduler: runs the components its composition root built (compose.py).

Lifecycle (`run()`): start informers -> wait until nodes and pods (and every resource a
plugin asked for) have synced -> run the scheduling loop (one pod at a time) with binding
cycles running concurrently in their own task group. `shutdown()` stops taking pods,
rejects pods waiting at Permit (their reservations are released), lets in-flight
bindings finish within a deadline, then cancels everything: nothing is left half-bound
because a binding is a single API call the API server applies atomically.

Its own state is the run's: ready, leading, stopping and the bindings in flight. The
components are `parts`; the queue, the cache, the profiles' frameworks and the pod
informer are also named here, as the callers that drive a scheduler in tests need them.
Tools that only watch get `view()` (asched.scheduler.views).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import structlog
from anyio.abc import TaskGroup

from asched.api import Pod
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.base.clock import Clock, RealClock
from asched.base.errors import report_unexpected
from asched.client.protocol import KubeClient
from asched.framework.handle import EventRecorder
from asched.framework.registry import Registry
from asched.framework.runtime import Framework
from asched.informers import Informer
from asched.informers.store import Store
from asched.scheduler.compose import Components, Options, SchedulerMetrics
from asched.scheduler.cycle import Assumed
from asched.scheduler.groupcycle import GroupCycle
from asched.scheduler.observe import CycleObserver
from asched.scheduler.views import SchedulerView

log = structlog.get_logger(__name__)


class Elector(Protocol):
    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None: ...


class Scheduler:
    def __init__(
        self,
        client: KubeClient,
        registry: Registry,
        options: Options,
        *,
        clock: Clock | None = None,
        events: EventRecorder | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self._options = options
        self._clock: Clock = clock or RealClock()
        self._metrics = metrics
        self.parts = Components(
            client,
            registry,
            options,
            clock=self._clock,
            events=events,
            metrics=metrics,
            to_binding=self._start_binding,
        )
        self.queue: SchedulingQueue = self.parts.queue
        self.cache: Cache = self.parts.cache
        self.frameworks: dict[str, Framework] = self.parts.frameworks
        self.pod_informer: Informer[Any] = self.parts.pod_informer
        self._stopping = False
        self._bind_tg: TaskGroup | None = None
        self._bindings_in_flight = 0
        self._bindings_idle = anyio.Event()
        self.ready = False
        self.leading = False

    def view(self) -> SchedulerView:
        """What a watching tool (the inspector) may read: asched.scheduler.views."""
        return self.parts.view(lambda: self.ready)

    def observe(self, observer: CycleObserver) -> None:
        """Tell *observer* every decision and bind (the inspector's collector)."""
        self.parts.observe(observer)

    def store(self, resource: str) -> Store[Any] | None:
        """The informer store of *resource* (an InformerRequest's), if one was started."""
        return self.parts.store(resource)

    def skip_pod(self, pod: Pod) -> bool:
        """kube-scheduler skipPodSchedule (Components.skip_pod)."""
        return self.parts.skip_pod(pod)

    # ---- cycles --------------------------------------------------------------------
    def _start_binding(self, assumed: Assumed) -> None:
        assert self._bind_tg is not None
        self._bind_tg.start_soon(self._binding, assumed)

    async def _binding(self, assumed: Assumed) -> None:
        self._bindings_in_flight += 1
        try:
            await self.parts.binding_cycle.run(assumed)
        except anyio.get_cancelled_exc_class():
            self.parts.binding_cycle.cancelled(assumed)
            raise
        finally:
            self._bindings_in_flight -= 1
            if not self._bindings_in_flight:
                self._bindings_idle.set()
                self._bindings_idle = anyio.Event()

    def idle(self) -> bool:
        """Nothing to schedule or bind now: a moment that can afford a long pause (the
        collector's full walk waits for one, gctune.Sweeper)."""
        return not self._bindings_in_flight and self.queue.drained()

    # ---- run -----------------------------------------------------------------------
    async def run(
        self,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
        *,
        elector: Elector | None = None,
    ) -> None:
        """Sync the caches, then schedule (under leadership when an elector is given).

        Caches are synced before campaigning, as kube-scheduler does, so a standby takes
        over with warm caches.
        """
        try:
            async with anyio.create_task_group() as tg:
                for inf in self.parts.informers():
                    tg.start_soon(inf.run)
                for inf in self.parts.informers():
                    await inf.wait_synced()
                log.info(
                    "caches_synced", nodes=self.cache.node_count(), pods=self.cache.pod_count()
                )
                if self._options.on_synced is not None:
                    self._options.on_synced()
                self.ready = True
                task_status.started()
                if elector is not None:
                    await elector.run(self._lead)
                else:
                    await self._lead()
                tg.cancel_scope.cancel()
        finally:
            # Closing is immediate (no awaiting inside), so it runs even when cancelled.
            await self.parts.extenders.close()

    async def _lead(self) -> None:
        self.leading = True
        log.info("scheduling_started", profiles=sorted(self.frameworks))
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.queue.run)
            tg.start_soon(self.parts.status_writer.run)
            tg.start_soon(self.parts.podgroup_conditions.run)
            for fwk in self.frameworks.values():
                for p in fwk.background_tasks:
                    tg.start_soon(p.run)
            if self._metrics is not None:
                tg.start_soon(self._report_pending)
            async with anyio.create_task_group() as bind_tg:
                self._bind_tg = bind_tg
                await self._scheduling_loop()
                # Stopping: pods at Permit are rejected (and unreserved by their cycles);
                # bindings already sent finish (each is one atomic API call).
                for fwk in self.frameworks.values():
                    for wp in fwk.waiting_pods:
                        wp.reject("", "scheduler shutting down")
                with anyio.move_on_after(self._options.shutdown_grace_seconds):
                    if self._bindings_in_flight:
                        await self._bindings_idle.wait()
                bind_tg.cancel_scope.cancel()
            tg.cancel_scope.cancel()
        self.leading = False

    async def _scheduling_loop(self) -> None:
        from asched.backend.queue import QueueClosed

        while not self._stopping:
            try:
                qpi = await self.queue.pop()
            except QueueClosed:
                return
            try:
                fwk = self.frameworks.get(qpi.pod.scheduler_name)
                if fwk is not None and GroupCycle.applies(fwk, qpi.pod):
                    await self.parts.group_cycle.run(qpi)
                else:
                    await self.parts.scheduling_cycle.run(qpi)
            except Exception as exc:
                # A bug in the cycle must not stop the scheduler: requeue with backoff.
                report_unexpected(
                    log, self._metrics, "scheduling_cycle", "schedule_one_crashed", pod=qpi.pod.key
                )
                self.parts.outcomes.failed(
                    qpi, qpi.pod.scheduler_name, time.perf_counter(), repr(exc), error=True
                )
            # One pod per iteration; let informers and bindings run between cycles.
            await anyio.lowlevel.checkpoint()

    async def _report_pending(self) -> None:
        while True:
            self.report_gauges()
            await self._clock.sleep(1.0)

    def report_gauges(self) -> None:
        """Queue and cache sizes into their gauges; the leader calls it once a second, as
        kube-scheduler's cache updates scheduler_cache_size every second."""
        if self._metrics is None:
            return
        self._metrics.set_pending(self.queue.pending_counts())
        cache = self.cache
        self._metrics.set_cache_size(
            cache.node_count(), cache.pod_count(), cache.assumed_pod_count()
        )

    @property
    def stopping(self) -> bool:
        return self._stopping

    def shutdown(self) -> None:
        """Stop taking new pods; run() then drains and returns."""
        self._stopping = True
        self.queue.close()
