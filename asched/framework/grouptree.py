"""The hierarchy of PodGroups and CompositePodGroups (gate CompositePodGroup), read from
the two informer stores: kube-scheduler's workloadForest (backend/queue) and the
hierarchy parts of its pod group manager (GetRootKeyForGroup, CompositePodGroupStates'
children), in one place for the group cycle and GangScheduling.

A PodGroup or CompositePodGroup names its parent CompositePodGroup (same namespace); the
root is the one with no parent. A root is missing when any composite on the way up is
not (yet) in the store; a cycle in the parent chain is treated the same, as Go's
getRootLookupInfoForParentCPG does. Children are listed from the namespace's groups on
each call (no index is kept): a composite's tree is read once per group cycle.
Children are ordered by kind (PodGroups first) and name; Go iterates a set, so its order
is random.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from asched.api.composite import CompositePodGroup
from asched.api.workload import NativePodGroup
from asched.framework.listers import ObjectStore

#: WorkloadMaxTreeDepth (scheduling/v1alpha3): at most this many levels.
MAX_TREE_DEPTH = 4


@dataclass(slots=True, frozen=True)
class GroupNode:
    """One group of a hierarchy: a PodGroup (a leaf, `pod_group` set) or a
    CompositePodGroup (`composite` set) with its children."""

    pod_group: NativePodGroup | None = None
    composite: CompositePodGroup | None = None
    children: tuple[GroupNode, ...] = ()

    @property
    def namespace(self) -> str:
        return self.pod_group.namespace if self.pod_group else self._cpg.namespace

    @property
    def name(self) -> str:
        return self.pod_group.name if self.pod_group else self._cpg.name

    @property
    def key(self) -> str:
        """Go's EntityKey: the kind keeps a PodGroup and a composite of one name apart."""
        if self.pod_group is not None:
            return entity_key(self.pod_group)
        return f"CompositePodGroup/{self.namespace}/{self.name}"

    @property
    def _cpg(self) -> CompositePodGroup:
        assert self.composite is not None
        return self.composite

    def leaves(self) -> Iterator[NativePodGroup]:
        """The PodGroups under this node (itself, for a leaf), depth first."""
        if self.pod_group is not None:
            yield self.pod_group
            return
        for child in self.children:
            yield from child.leaves()


def entity_key(pg: NativePodGroup) -> str:
    """A PodGroup's GroupNode.key."""
    return f"PodGroup/{pg.namespace}/{pg.name}"


class GroupForest:
    """Lookups over the PodGroup and CompositePodGroup stores."""

    def __init__(
        self, groups: ObjectStore[NativePodGroup], composites: ObjectStore[CompositePodGroup]
    ) -> None:
        self._groups = groups
        self._composites = composites

    def composite(self, namespace: str, name: str) -> CompositePodGroup | None:
        return self._composites.get(f"{namespace}/{name}")

    def ancestors(self, namespace: str, parent: str) -> Iterator[CompositePodGroup]:
        """The composites above a group whose parent is `parent`, nearest first, as far as
        they are observed (a loop ends the walk; TraverseHierarchyUp)."""
        seen: set[str] = set()
        name = parent
        while name and name not in seen:
            seen.add(name)
            cpg = self.composite(namespace, name)
            if cpg is None:
                return
            yield cpg
            name = cpg.parent

    def root_composite(self, namespace: str, parent: str) -> CompositePodGroup | None:
        """The root CompositePodGroup above a group whose parent is `parent`, or None when
        a composite on the way is missing or the chain loops
        (getRootLookupInfoForParentCPG)."""
        last: CompositePodGroup | None = None
        for cpg in self.ancestors(namespace, parent):
            last = cpg
        return last if last is not None and not last.parent else None

    def tree(self, root: CompositePodGroup) -> GroupNode:
        """The root's hierarchy as the stores have it now (buildPodGroupInfoForCPG); a
        group met twice (a cycle) is left out the second time."""
        ns = root.namespace
        kids: dict[str, tuple[list[NativePodGroup], list[CompositePodGroup]]] = {}
        for pg in self._groups.in_namespace(ns).values():
            if pg.parent:
                kids.setdefault(pg.parent, ([], []))[0].append(pg)
        for cpg in self._composites.in_namespace(ns).values():
            if cpg.parent:
                kids.setdefault(cpg.parent, ([], []))[1].append(cpg)
        seen: set[str] = set()

        def build(cpg: CompositePodGroup) -> GroupNode:
            seen.add(cpg.name)
            pgs, cpgs = kids.get(cpg.name, ([], []))
            children = [GroupNode(pod_group=pg) for pg in sorted(pgs, key=lambda g: g.name)]
            children += [build(c) for c in sorted(cpgs, key=lambda c: c.name) if c.name not in seen]
            return GroupNode(composite=cpg, children=tuple(children))

        return build(root)
