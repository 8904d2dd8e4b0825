"""A headless inspector (no browser listening) forgets the rejections of pods that left
the queue: they were kept up to the Collector's cap, growing for as long as pods came and
went unschedulable (the soak's mixed churn: one a second)."""

from __future__ import annotations

from asched.app import scheduler_options
from asched.config import default_config
from asched.inspector import Broadcaster, Collector, Inspector
from asched.inspector.collector import Rejection
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from asched.testing import FakeClient
from tests.builders import make_pod

# Past asched.inspector.snapshot.PRUNE_EVERY (10 s).
LATER = 60.0


class Wall:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _rejection() -> Rejection:
    return Rejection(1000.0, "default-scheduler", 3, {"NodeResourcesFit": 3}, "0/3 nodes")


def _inspector(wall: Wall) -> tuple[Inspector, Collector]:
    registry = in_tree_registry()
    sched = Scheduler(FakeClient(), registry, scheduler_options(default_config(registry)))
    sched.queue.add(make_pod("waiting").obj())
    collector = Collector(wall=wall)
    return Inspector(sched.view(), collector, Broadcaster(), wall=wall), collector


def test_rejections_of_pods_gone_from_the_queue_are_dropped_without_a_browser() -> None:
    wall = Wall()
    inspector, collector = _inspector(wall)
    for name in ("waiting", "deleted-1", "deleted-2", "bound"):
        collector.rejections[f"default/{name}"] = _rejection()
    inspector.tick()
    assert len(collector.rejections) == 4  # not at every tick
    wall.now += LATER
    inspector.tick()
    assert list(collector.rejections) == ["default/waiting"]


def test_no_pass_over_the_queue_while_rejections_are_no_more_than_pending_pods() -> None:
    wall = Wall()
    inspector, collector = _inspector(wall)
    collector.rejections["default/gone"] = _rejection()  # one rejection, one pending pod
    wall.now += LATER
    inspector.tick()
    assert list(collector.rejections) == ["default/gone"]
