"""The inspector shows gangs through the gang plugins' GangView, naming no plugin: a
native PodGroup (GangScheduling) with its members counted as created, assumed and bound."""

from __future__ import annotations

from asched.app import scheduler_options
from asched.config import default_config
from asched.framework.workloads import NATIVE_POD_GROUPS
from asched.inspector import Broadcaster, Collector, Inspector
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from asched.testing import FakeClient
from tests.builders import make_native_pod_group, make_node, make_pod


def test_native_gangs_come_from_the_gang_plugin_once_with_their_census() -> None:
    registry = in_tree_registry()
    sched = Scheduler(FakeClient(), registry, scheduler_options(default_config(registry)))
    groups = sched.store(NATIVE_POD_GROUPS.resource)
    assert groups is not None
    pg = make_native_pod_group("train").min_count(3).obj()
    groups.upsert(pg.key, pg, "1")
    sched.cache.add_node(make_node("n1").capacity(cpu="4").obj())
    pods = sched.pod_informer.store
    members = [
        make_pod("m0").uid("u0").scheduling_group("train").node("n1").obj(),
        make_pod("m1").uid("u1").scheduling_group("train").obj(),
        make_pod("m2").uid("u2").scheduling_group("train").obj(),
    ]
    for i, p in enumerate(members):
        pods.upsert(p.key, p, str(i))
    sched.cache.assume_pod(make_pod("m1").uid("u1").scheduling_group("train").node("n1").obj())
    gangs = Inspector(sched.view(), Collector(), Broadcaster()).snapshot()["gangs"]
    assert gangs == [
        {
            "kind": "scheduling.k8s.io",
            "name": "default/train",
            "minMember": 3,
            "created": 3,
            "assumed": 1,
            "bound": 1,
            "state": "Pending",
            "timeoutSeconds": None,
        }
    ]
