"""The read-only SchedulerView a watching tool gets: queue depths, pending pods oldest
first, the cache's nodes and assumptions, informer lookups."""

from __future__ import annotations

from asched.app import scheduler_options
from asched.base.clock import FakeClock
from asched.config import default_config
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from asched.scheduler.views import PendingPod
from asched.testing import FakeClient
from tests.builders import make_node, make_pod


def test_the_view_reads_queue_cache_and_informer_without_exposing_them() -> None:
    registry = in_tree_registry()
    clock = FakeClock()
    sched = Scheduler(
        FakeClient(), registry, scheduler_options(default_config(registry)), clock=clock
    )
    view = sched.view()
    start = clock.now()
    sched.queue.add(make_pod("first").uid("u1").obj())
    clock.advance(5)
    sched.queue.add(make_pod("second").uid("u2").obj())
    sched.cache.add_node(make_node("n1").obj())
    sched.cache.assume_pod(make_pod("placed").uid("u3").node("n1").obj())
    bound = make_pod("bound").uid("u4").node("n1").obj()
    sched.pod_informer.store.upsert(bound.key, bound, "1")

    assert view.queue.pending_counts()["active"] == 2
    assert list(view.queue.pending()) == [
        PendingPod("default/first", "u1", "active", start, 0, ""),
        PendingPod("default/second", "u2", "active", start + 5, 0, ""),
    ]
    assert list(view.cache.node_names()) == ["n1"]
    assert view.cache.is_assumed("u3")
    assert view.pod("default/bound") == bound
    assert view.now() == start + 5
    assert not view.ready
