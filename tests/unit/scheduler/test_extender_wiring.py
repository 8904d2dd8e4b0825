"""The Scheduler with extenders configured: how it wires them in (buildExtenders,
frameworkImpl's ExtenderName enqueue extension, signatures off)."""

from __future__ import annotations

from typing import cast

import orjson

from asched.app import scheduler_options
from asched.client.protocol import KubeClient
from asched.config import load_config
from asched.extender import EXTENDER_NAME
from asched.framework import events as ev
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: with-ext
extenders:
  - urlPrefix: http://127.0.0.1:1/ext
    filterVerb: filter
"""


def _scheduler(text: str = CONFIG) -> Scheduler:
    registry = in_tree_registry()
    return Scheduler(
        cast(KubeClient, object()), registry, scheduler_options(load_config(text, registry))
    )


async def test_extender_rejection_requeues_on_any_event_and_batching_is_off() -> None:
    sched = _scheduler()
    fwk = sched.frameworks["with-ext"]
    assert fwk.batch is None
    assert sched.parts.extenders
    assert fwk.handle.extenders is sched.parts.extenders  # type: ignore[attr-defined]
    pod = make_pod("p").scheduler("with-ext").obj()
    sched.queue.add(pod)
    qpi = await sched.queue.pop()
    qpi.unschedulable_plugins = {EXTENDER_NAME}
    sched.queue.add_unschedulable_if_not_present(qpi)
    assert sched.queue.where(pod.uid) == "unschedulable"
    sched.queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node("n").obj())
    assert sched.queue.where(pod.uid) in ("active", "backoff")


def test_without_extenders_nothing_changes() -> None:
    sched = _scheduler(CONFIG.split("extenders:", maxsplit=1)[0])
    assert not sched.parts.extenders
    assert sched.parts.wire_objects is None
    assert sched.frameworks["with-ext"].batch is not None


def test_informers_keep_the_json_extenders_are_sent_until_the_pod_is_gone() -> None:
    sched = _scheduler()
    wire = sched.parts.wire_objects
    assert wire is not None
    raw = make_pod("p").scheduler("with-ext").label("app", "x").raw()
    pod = sched.pod_informer._decode_fn(raw)
    assert orjson.loads(wire.pod(pod)) == raw
    sched.parts.pod_handler.on_delete(pod)
    assert orjson.loads(wire.pod(pod)) == {
        "metadata": {"name": "p", "namespace": "default", "uid": pod.uid},
        "spec": {},
    }
