"""Cache: assume / confirm / forget, node accounting, incremental snapshots."""

from __future__ import annotations

from dataclasses import replace

import pytest

from asched.backend.cache import Cache, CacheError
from asched.backend.snapshot import Snapshot
from tests.builders import make_node, make_pod


def _cache_with_nodes(*names: str) -> Cache:
    cache = Cache()
    for n in names:
        cache.add_node(make_node(n).capacity(cpu="4", memory="8Gi").obj())
    return cache


def test_assume_counts_pod_on_node_before_binding() -> None:
    cache = _cache_with_nodes("n1")
    pod = make_pod("p").cpu("1").obj()
    cache.assume_pod(replace(pod, node_name="n1"))
    ni = cache.get_node_info("n1")
    assert ni is not None
    assert ni.requested.milli_cpu == 1000
    assert cache.is_assumed(pod.uid)


def test_confirm_replaces_assumed_copy_without_double_counting() -> None:
    cache = _cache_with_nodes("n1")
    pod = make_pod("p").cpu("1").obj()
    cache.assume_pod(replace(pod, node_name="n1"))
    cache.add_pod(replace(pod, node_name="n1"))  # the informer sees the binding
    ni = cache.get_node_info("n1")
    assert ni is not None
    assert ni.requested.milli_cpu == 1000
    assert len(ni.pods) == 1
    assert not cache.is_assumed(pod.uid)


def test_confirm_on_other_node_moves_the_pod() -> None:
    cache = _cache_with_nodes("n1", "n2")
    pod = make_pod("p").cpu("1").obj()
    cache.assume_pod(replace(pod, node_name="n1"))
    cache.add_pod(replace(pod, node_name="n2"))
    n1, n2 = cache.get_node_info("n1"), cache.get_node_info("n2")
    assert n1 is not None
    assert n2 is not None
    assert (n1.requested.milli_cpu, n2.requested.milli_cpu) == (0, 1000)


def test_forget_releases_and_is_idempotent() -> None:
    cache = _cache_with_nodes("n1")
    pod = replace(make_pod("p").cpu("1").obj(), node_name="n1")
    cache.assume_pod(pod)
    cache.forget_pod(pod)
    cache.forget_pod(pod)
    ni = cache.get_node_info("n1")
    assert ni is not None
    assert ni.requested.milli_cpu == 0
    assert not ni.pods


def test_forget_does_not_remove_a_confirmed_pod() -> None:
    cache = _cache_with_nodes("n1")
    pod = replace(make_pod("p").cpu("1").obj(), node_name="n1")
    cache.assume_pod(pod)
    cache.add_pod(pod)
    cache.forget_pod(pod)
    ni = cache.get_node_info("n1")
    assert ni is not None
    assert len(ni.pods) == 1


def test_assume_twice_is_a_bug() -> None:
    cache = _cache_with_nodes("n1")
    pod = replace(make_pod("p").obj(), node_name="n1")
    cache.assume_pod(pod)
    with pytest.raises(CacheError):
        cache.assume_pod(pod)


def test_pod_before_node_then_node_arrives() -> None:
    cache = Cache()
    cache.add_pod(make_pod("p").cpu("1").node("n1").obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert snap.num_nodes() == 0  # no node object yet: not schedulable
    cache.add_node(make_node("n1").obj())
    cache.update_snapshot(snap)
    ni = snap.get("n1")
    assert ni is not None
    assert ni.requested.milli_cpu == 1000


def test_snapshot_is_isolated_from_later_cache_changes() -> None:
    cache = _cache_with_nodes("n1", "n2")
    snap = Snapshot()
    cache.update_snapshot(snap)
    before = snap.get("n1")
    cache.add_pod(make_pod("p").cpu("2").node("n1").obj())
    assert before is not None
    assert before.requested.milli_cpu == 0
    cache.update_snapshot(snap)
    after = snap.get("n1")
    assert after is not None
    assert after.requested.milli_cpu == 2000
    assert [ni.name for ni in snap.node_infos()] == ["n1", "n2"]
    assert snap.node_infos()[0] is after


def test_snapshot_clones_only_changed_nodes() -> None:
    cache = _cache_with_nodes("n1", "n2")
    snap = Snapshot()
    cache.update_snapshot(snap)
    n2_before = snap.get("n2")
    cache.add_pod(make_pod("p").node("n1").obj())
    cache.update_snapshot(snap)
    assert snap.get("n2") is n2_before


def test_node_removal_drops_it_from_snapshot_but_keeps_its_pods_accounted() -> None:
    cache = _cache_with_nodes("n1", "n2")
    pod = make_pod("p").cpu("1").node("n1").obj()
    cache.add_pod(pod)
    snap = Snapshot()
    cache.update_snapshot(snap)
    cache.remove_node("n1")
    cache.update_snapshot(snap)
    assert [ni.name for ni in snap.node_infos()] == ["n2"]
    cache.remove_pod(pod)
    assert cache.get_node_info("n1") is None


def test_affinity_lists_follow_pods() -> None:
    cache = _cache_with_nodes("n1", "n2")
    snap = Snapshot()
    cache.update_snapshot(snap)
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "x"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    pod = make_pod("p").affinity(anti).node("n2").obj()
    cache.add_pod(pod)
    cache.update_snapshot(snap)
    assert [ni.name for ni in snap.have_pods_with_required_anti_affinity()] == ["n2"]
    assert [ni.name for ni in snap.have_pods_with_affinity()] == ["n2"]
    cache.remove_pod(pod)
    cache.update_snapshot(snap)
    assert not snap.have_pods_with_required_anti_affinity()


def test_affinity_lists_are_kept_until_an_affinity_node_changes() -> None:
    """The lists are remade only when a row in them (or joining them) changes, and then
    hold that node's current NodeInfo."""
    cache = _cache_with_nodes("n1", "n2")
    snap = Snapshot()
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
            ]
        }
    }
    cache.add_pod(make_pod("a").affinity(anti).node("n2").obj())
    cache.update_snapshot(snap)
    affinity, anti_affinity = (
        snap.have_pods_with_affinity(),
        snap.have_pods_with_required_anti_affinity(),
    )
    cache.add_pod(make_pod("plain-1").node("n1").obj())
    cache.update_snapshot(snap)
    assert snap.have_pods_with_affinity() is affinity  # n1 is in neither list
    assert snap.have_pods_with_required_anti_affinity() is anti_affinity
    cache.add_pod(make_pod("plain-2").node("n2").obj())
    cache.update_snapshot(snap)
    for listed in (snap.have_pods_with_affinity(), snap.have_pods_with_required_anti_affinity()):
        assert [(ni.name, len(ni.pods)) for ni in listed] == [("n2", 2)]
        assert listed[0] is snap.get("n2")
    cache.add_pod(make_pod("b").affinity(anti).node("n1").obj())
    cache.update_snapshot(snap)
    assert [ni.name for ni in snap.have_pods_with_affinity()] == ["n1", "n2"]
    assert [ni.name for ni in snap.have_pods_with_required_anti_affinity()] == ["n1", "n2"]


def test_host_ports_accounting() -> None:
    cache = _cache_with_nodes("n1")
    pod = make_pod("p").host_port(8080).node("n1").obj()
    cache.add_pod(pod)
    ni = cache.get_node_info("n1")
    assert ni is not None
    assert len(ni.used_ports) == 1
    cache.remove_pod(pod)
    assert not ni.used_ports


def test_image_counts_are_taken_when_the_snapshot_clones_the_node() -> None:
    # kube-scheduler shares each image's cache-wide state between the NodeInfos and counts
    # its nodes at snapshot time (ImageStateSummary.Snapshot): the node added first sees
    # the holders added after it in the first snapshot.
    cache = Cache()
    cache.add_node(make_node("a").image(["img:v1"], 100).image(["other:v1"], 7).obj())
    cache.add_node(make_node("b").image(["img:v1"], 100).obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    a, b = snap.get("a"), snap.get("b")
    assert a is not None
    assert b is not None
    assert (a.image_states["img:v1"].num_nodes, b.image_states["img:v1"].num_nodes) == (2, 2)
    assert a.image_states["other:v1"].num_nodes == 1
    cache.remove_node("b")
    cache.add_node(make_node("c").obj())  # a not touched: its snapshot clone stays as it was
    cache.update_snapshot(snap)
    a = snap.get("a")
    assert a is not None
    assert a.image_states["img:v1"].num_nodes == 2
