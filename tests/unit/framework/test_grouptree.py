"""The PodGroup / CompositePodGroup hierarchy read from the informer stores (Go's
workloadForest): the root above a group, missing parents and cycles, and the tree."""

from __future__ import annotations

from asched.api.composite import CompositePodGroup
from asched.api.workload import NativePodGroup
from asched.framework.grouptree import GroupForest, entity_key
from asched.informers.store import Store
from tests.builders import make_composite_pod_group, make_native_pod_group


def _forest(groups: list[NativePodGroup], composites: list[CompositePodGroup]) -> GroupForest:
    pgs: Store[NativePodGroup] = Store()
    for pg in groups:
        pgs.upsert(pg.key, pg, "1")
    cpgs: Store[CompositePodGroup] = Store()
    for cpg in composites:
        cpgs.upsert(cpg.key, cpg, "1")
    return GroupForest(pgs, cpgs)


def test_root_is_found_through_two_levels_and_the_tree_lists_every_leaf() -> None:
    forest = _forest(
        [
            make_native_pod_group("b").parent("mid").obj(),
            make_native_pod_group("a").parent("mid").obj(),
            make_native_pod_group("c").parent("top").obj(),
            make_native_pod_group("other").obj(),
            make_native_pod_group("elsewhere", "ns2").parent("top").obj(),
        ],
        [
            make_composite_pod_group("top").obj(),
            make_composite_pod_group("mid").parent("top").obj(),
        ],
    )
    root = forest.root_composite("default", "mid")
    assert root is not None
    assert root.name == "top"
    tree = forest.tree(root)
    # PodGroups before composites, each by name; another namespace is not a child.
    assert [c.key for c in tree.children] == [
        "PodGroup/default/c",
        "CompositePodGroup/default/mid",
    ]
    assert [pg.name for pg in tree.leaves()] == ["c", "a", "b"]
    assert tree.children[0].key == entity_key(make_native_pod_group("c").obj())


def test_a_missing_parent_or_a_cycle_has_no_root() -> None:
    forest = _forest(
        [],
        [
            make_composite_pod_group("x").parent("y").obj(),
            make_composite_pod_group("y").parent("x").obj(),
            make_composite_pod_group("orphan").parent("gone").obj(),
        ],
    )
    assert forest.root_composite("default", "gone") is None
    assert forest.root_composite("default", "orphan") is None
    assert forest.root_composite("default", "x") is None


def test_a_cycle_below_the_root_is_cut() -> None:
    top = make_composite_pod_group("top").obj()
    forest = _forest(
        [make_native_pod_group("g").parent("top").obj()],
        [top, make_composite_pod_group("top2").parent("top").obj()],
    )
    tree = forest.tree(top)
    assert [pg.name for pg in tree.leaves()] == ["g"]
    assert [c.name for c in tree.children] == ["g", "top2"]
