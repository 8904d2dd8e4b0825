"""The metric series that read 0 until they were fed: each moves when its event happens.

scheduler_scheduling_algorithm_duration_seconds, scheduler_goroutines{operation="binding"},
scheduler_permit_wait_duration_seconds, scheduler_plugin_evaluation_total,
scheduler_unschedulable_pods and scheduler_cache_size, driven through the real cycles,
queue and cache of tests/unit/scheduler/test_cycles.py's Harness.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import anyio
import pytest

from asched.app import scheduler_options
from asched.client.protocol import KubeClient
from asched.config import default_config
from asched.framework import status as st
from asched.framework.evaluations import filter_evaluations
from asched.metrics import Metrics
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod
from tests.unit.scheduler.test_cycles import Harness, _pod


def sample(m: Metrics, name: str, **labels: str) -> float:
    return m.registry.get_sample_value(name, labels) or 0.0


async def test_algorithm_duration_is_observed_per_attempt_fit_or_not() -> None:
    m = Metrics(process_metrics=False)
    h = Harness(metrics=m)
    await h.schedule(_pod("fits"))
    h.cache.update_node(make_node("n1").obj())  # loses ok=true
    h.cache.update_node(make_node("n2").obj())
    h.cache.update_node(make_node("n3").obj())
    await h.schedule(_pod("fits-nowhere"))

    assert sample(m, "scheduler_scheduling_algorithm_duration_seconds_count") == 2.0


async def test_binding_goroutines_count_cycles_from_permit_to_bind() -> None:
    m = Metrics(process_metrics=False)
    h = Harness(metrics=m)
    a = await h.schedule(_pod("p", permit="wait"))
    assert a is not None
    binding = {"operation": "binding"}
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.binding.run, a)
        await anyio.wait_all_tasks_blocked()
        assert sample(m, "scheduler_goroutines", **binding) == 1.0  # waiting at Permit
        h.services.clock.advance(2.5)
        wp = h.fwk.waiting_pods.get(a.pod.uid)
        assert wp is not None
        wp.allow("Gate")
    assert h.binder.bound == [("p", a.node)]
    assert sample(m, "scheduler_goroutines", **binding) == 0.0
    # The wait is timed on the framework's clock and labelled by its outcome.
    assert sample(m, "scheduler_permit_wait_duration_seconds_count", result="Success") == 1.0
    assert sample(m, "scheduler_permit_wait_duration_seconds_sum", result="Success") == 2.5


async def test_permit_wait_rejection_is_labelled_by_its_code() -> None:
    m = Metrics(process_metrics=False)
    h = Harness(metrics=m)
    a = await h.schedule(_pod("p", permit="wait"))
    assert a is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.binding.run, a)
        await anyio.wait_all_tasks_blocked()
        h.fwk.waiting_pods.reject(a.pod.uid, "Gate", "gang timed out")

    assert sample(m, "scheduler_permit_wait_duration_seconds_count", result="Unschedulable") == 1


async def test_plugin_evaluations_per_point() -> None:
    m = Metrics(process_metrics=False)
    h = Harness(metrics=m)
    h.cache.update_node(make_node("n3").obj())  # n3 loses ok=true: Label rejects it
    await h.schedule(_pod("p"))

    def evaluations(plugin: str, point: str) -> float:
        return sample(
            m,
            "scheduler_plugin_evaluation_total",
            plugin=plugin,
            extension_point=point,
            profile="test",
        )

    assert evaluations("Label", "PreFilter") == 1.0
    assert evaluations("Label", "Filter") == 3.0  # once per node
    assert evaluations("Prefer", "Score") == 2.0  # once per feasible node


@pytest.mark.parametrize(
    ("feasible", "rejected_by", "expected"),
    [
        pytest.param(3, [], [("A", 3), ("B", 3), ("C", 3)], id="all-fit"),
        pytest.param(0, ["A", "A"], [("A", 2)], id="first-rejects-all"),
        pytest.param(1, ["B", "C"], [("A", 3), ("B", 3), ("C", 2)], id="stops-at-rejection"),
        pytest.param(1, ["SomePreFilter"], [("A", 1), ("B", 1), ("C", 1)], id="not-a-filter"),
    ],
)
def test_filter_evaluations_count_what_run_filter_plugins_would_call(
    feasible: int, rejected_by: list[str], expected: list[tuple[str, int]]
) -> None:
    rejected = [(st.unschedulable("no").with_plugin(p), 1) for p in rejected_by]
    assert filter_evaluations(["A", "B", "C"], feasible, rejected) == expected


async def test_unschedulable_pods_by_plugin_follow_the_pool() -> None:
    m = Metrics(process_metrics=False)
    h = Harness(metrics=m)
    for name in ("n1", "n2", "n3"):
        h.cache.update_node(make_node(name).obj())  # Label rejects every node
    pod = _pod("p")
    await h.schedule(pod)
    label = {"plugin": "Label", "profile": "test"}
    assert h.queue.where(pod.uid) == "unschedulable"
    assert sample(m, "scheduler_unschedulable_pods", **label) == 1.0

    h.queue.delete(pod)

    assert sample(m, "scheduler_unschedulable_pods", **label) == 0.0


def test_cache_size_counts_nodes_pods_and_assumed_pods() -> None:
    m = Metrics(process_metrics=False)
    registry = in_tree_registry()
    client = cast(KubeClient, object())  # never called: the scheduler is not run
    sched = Scheduler(client, registry, scheduler_options(default_config(registry)), metrics=m)
    sched.cache.add_node(make_node("n1").obj())
    bound = make_pod("bound").node("n1").obj()
    sched.cache.add_pod(bound)
    waiting, forgotten = make_pod("waiting").obj(), make_pod("forgotten").obj()
    sched.cache.assume_pod(replace(waiting, node_name="n1"))
    sched.cache.assume_pod(replace(forgotten, node_name="n1"))
    sched.cache.forget_pod(replace(forgotten, node_name="n1"))

    sched.report_gauges()

    def size(kind: str) -> float:
        return sample(m, "scheduler_cache_size", type=kind)

    assert (size("nodes"), size("pods"), size("assumed_pods")) == (1.0, 2.0, 1.0)

    sched.cache.add_pod(replace(waiting, node_name="n1"))  # the informer confirms it
    sched.report_gauges()

    assert (size("pods"), size("assumed_pods")) == (2.0, 0.0)
