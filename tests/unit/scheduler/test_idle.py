"""Scheduler.idle: the moment the collector's full walk waits for (gctune.Sweeper)."""

from __future__ import annotations

from typing import cast

import anyio

from asched.app import scheduler_options
from asched.client.protocol import KubeClient
from asched.config import default_config
from asched.plugins.registry import in_tree_registry
from asched.scheduler.cycle import Assumed
from asched.scheduler.scheduler import Scheduler
from tests.builders import make_pod


def _scheduler() -> Scheduler:
    registry = in_tree_registry()
    client = cast(KubeClient, object())  # never called: the scheduler is not run
    return Scheduler(client, registry, scheduler_options(default_config(registry)))


async def test_idle_until_a_pod_is_queued_and_again_once_it_waits_as_unschedulable() -> None:
    sched = _scheduler()
    assert sched.idle()
    sched.queue.add(make_pod("p").obj())
    assert not sched.idle()
    qpi = await sched.queue.pop()
    assert not sched.idle()  # in its scheduling cycle
    qpi.unschedulable_plugins = {"NodeResourcesFit"}
    sched.queue.add_unschedulable_if_not_present(qpi, error=False)
    assert sched.idle()


async def test_not_idle_while_a_binding_is_in_flight() -> None:
    sched = _scheduler()
    release = anyio.Event()
    started = anyio.Event()

    async def binding(a: Assumed) -> None:
        started.set()
        await release.wait()

    sched.parts.binding_cycle.run = binding  # type: ignore[method-assign]
    async with anyio.create_task_group() as tg:
        tg.start_soon(sched._binding, cast(Assumed, object()))
        await started.wait()
        assert not sched.idle()
        release.set()
    assert sched.idle()
