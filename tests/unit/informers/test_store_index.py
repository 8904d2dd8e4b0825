"""Store indexers: the pod indexes behind Handle.pods_in_namespace and pods_in_group."""

from __future__ import annotations

from asched.api import Pod
from asched.api.podgroup import pod_group_key
from asched.informers import Store
from tests.builders import PodBuilder, make_pod


def pod(name: str, group: str = "", ns: str = "ns") -> PodBuilder:
    b = make_pod(name, ns).uid(f"uid-{name}")
    return b.pod_group(group) if group else b


def store() -> Store[Pod]:
    return Store({"group": pod_group_key})


def members(s: Store[Pod], key: str) -> list[str]:
    return sorted(p.name for p in s.by_index("group", key).values())


def test_group_index_follows_adds_relabels_and_deletes() -> None:
    s = store()
    a, b, c = pod("a", "g").obj(), pod("b", "g").obj(), pod("c").obj()
    for p in (a, b, c):
        s.upsert(p.key, p, "1")
    assert members(s, "ns/g") == ["a", "b"]
    s.upsert(b.key, pod("b", "h").obj(), "2")
    assert (members(s, "ns/g"), members(s, "ns/h")) == (["a"], ["b"])
    s.remove(a.key)
    s.remove(b.key)
    assert members(s, "ns/g") == []
    assert members(s, "ns/h") == []
    assert [p.name for p in s.in_namespace("ns").values()] == ["c"]
    s.remove(c.key)
    assert dict(s.in_namespace("ns")) == {}


def test_group_index_keeps_namespaces_apart() -> None:
    s = store()
    for p in (pod("a", "g", ns="one").obj(), pod("b", "g", ns="two").obj()):
        s.upsert(p.key, p, "1")
    assert (members(s, "one/g"), members(s, "two/g")) == (["a"], ["b"])


def test_store_without_indexers_still_stores() -> None:
    s: Store[Pod] = Store()
    p = pod("a").obj()
    s.upsert(p.key, p, "1")
    assert s.get(p.key) is p


def test_namespace_view_needs_no_indexer_and_skips_cluster_scoped_keys() -> None:
    s: Store[Pod] = Store()
    a, b = pod("a", ns="x").obj(), pod("b", ns="y").obj()
    for p in (a, b):
        s.upsert(p.key, p, "1")
    s.upsert("node-1", a, "1")  # a cluster-scoped key files under no namespace
    assert [p.name for p in s.in_namespace("x").values()] == ["a"]
    assert list(s.in_namespace("")) == []
    s.upsert(a.key, pod("a", ns="x").obj(), "2")
    assert len(s.in_namespace("x")) == 1
    s.remove(a.key)
    assert dict(s.in_namespace("x")) == {}
