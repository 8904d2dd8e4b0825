"""An asched scheduler run inside the demo's event loop, as `asched run` would run it.

Same wiring as asched.app.run (a RestClient as the scheduler's own identity, an
EventRecorder that posts Events, the Scheduler) minus what a demo does not need: no ops
server, no leader election, no signal handling (the demo owns the signals). Running in
process rather than as child processes means one task group owns everything, so
cancelling it on Ctrl-C leaves nothing behind.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.abc

from asched.app import scheduler_options
from asched.base.clock import RealClock
from asched.client.kubeconfig import load_connection
from asched.client.rest import RestClient
from asched.config import SchedulerConfig
from asched.framework.registry import Registry
from asched.recorder import EventRecorder
from asched.scheduler.scheduler import Scheduler


class InProcessScheduler:
    def __init__(
        self, name: str, config: SchedulerConfig, registry: Registry, kubeconfig: Path
    ) -> None:
        self.name = name
        self.config = config
        self.registry = registry
        self.kubeconfig = kubeconfig

    @property
    def profiles(self) -> list[str]:
        return [p.scheduler_name for p in self.config.profiles]

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Report started once the caches have synced; then schedule until cancelled."""
        clock = RealClock()
        connection = await load_connection(str(self.kubeconfig))
        cc = self.config.client_connection
        async with (
            RestClient(
                connection, qps=cc.qps, burst=cc.burst, clock=clock, content_type=cc.content_type
            ) as client,
            anyio.create_task_group() as tg,
        ):
            recorder = EventRecorder(
                client,
                clock,
                reporting_controller="asched",
                reporting_instance=f"asched-demo-{self.name}",
            )
            sched = Scheduler(
                client, self.registry, scheduler_options(self.config), clock=clock, events=recorder
            )
            tg.start_soon(recorder.run)
            await tg.start(sched.run)
            task_status.started()
