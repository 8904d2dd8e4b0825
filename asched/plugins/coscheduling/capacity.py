"""Can the cluster hold a gang at all, and can it now? (scheduler-plugins CheckClusterResource)

Both checks are cluster-wide sums, so they only catch what no placement could fix: passing
them does not mean the members fit their nodes (Filter and PostFilter decide that). They
exist so a hopeless gang fails at once with a reason naming the resource, instead of
reserving members and waiting for its Permit timeout.

- `never_fits`: the group's minResources, or the least its minMember members could request
  together (per resource, the sum of the smallest minMember requests), exceeds the
  cluster's total allocatable. Only new nodes can change that.
- `short_now`: minResources (plus minMember pods) exceed the free resources summed over the
  nodes, counting the group's own assigned members as free since minResources includes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod, Resource
from asched.api.podgroup import PodGroup
from asched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from asched.base.clock import Clock
from asched.framework.nodeinfo import NodeInfo

# Allocatable totals are recomputed at most this often while the node count is unchanged.
TOTALS_TTL_SECONDS = 5.0


def fmt_quantity(resource: str, value: int) -> str:
    if resource == CPU:
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if resource in (MEMORY, EPHEMERAL_STORAGE):
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value and value % size == 0:
                return f"{value // size}{suffix}"
    return str(value)


def dims(r: Resource) -> dict[str, int]:
    """The non-zero entries of a Resource, by API resource name."""
    out = {
        CPU: r.milli_cpu,
        MEMORY: r.memory,
        EPHEMERAL_STORAGE: r.ephemeral_storage,
        PODS: r.allowed_pods,
    }
    out.update(r.scalar)
    return {k: v for k, v in out.items() if v > 0}


class ClusterTotals:
    """The cluster's allocatable, summed over the snapshot's nodes and briefly cached.

    Keyed on the node count, so an added or removed node is seen at once; an allocatable
    change on an existing node is seen within TOTALS_TTL_SECONDS.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._cached: tuple[float, int, Resource] | None = None

    def allocatable(self, nodes: Sequence[NodeInfo]) -> Resource:
        now = self._clock.now()
        c = self._cached
        if c is not None and c[1] == len(nodes) and now - c[0] < TOTALS_TTL_SECONDS:
            return c[2]
        total = Resource()
        for ni in nodes:
            if ni.node is not None:
                total.add(ni.allocatable)
        self._cached = (now, len(nodes), total)
        return total


def never_fits(pg: PodGroup, members: Sequence[Pod], total: Resource) -> str | None:
    need = dims(pg.min_resources)
    if need:
        need[PODS] = max(need.get(PODS, 0), pg.min_member)
    lower: dict[str, int] = {PODS: pg.min_member}
    for dim in {d for p in members for d in dims(p.requests)}:
        values = sorted(p.requests.get(dim) for p in members)
        lower[dim] = sum(values[: pg.min_member])
    for dim in sorted(set(need) | set(lower)):
        want = max(need.get(dim, 0), lower.get(dim, 0))
        if want > total.get(dim):
            return (
                f"PodGroup {pg.key} can never fit: it needs {fmt_quantity(dim, want)} {dim} "
                f"but the cluster's allocatable {dim} is {fmt_quantity(dim, total.get(dim))}"
            )
    return None


def short_now(
    pg: PodGroup, nodes: Sequence[NodeInfo], assigned: int, assigned_requests: Resource
) -> str | None:
    need = dims(pg.min_resources)
    if not need:
        return None
    need[PODS] = max(need.get(PODS, 0), pg.min_member)
    free = dict.fromkeys(need, 0)
    for ni in nodes:
        if ni.node is None:
            continue
        alloc = ni.allocatable
        for dim in need:
            used = len(ni.pods) if dim == PODS else ni.requested.get(dim)
            # An overcommitted node frees nothing, but takes nothing from the others.
            free[dim] += max(alloc.get(dim) - used, 0)
    for dim in need:
        free[dim] += assigned if dim == PODS else assigned_requests.get(dim)
    for dim in sorted(need):
        if need[dim] > free[dim]:
            return (
                f"PodGroup {pg.key} does not fit now: its minResources need "
                f"{fmt_quantity(dim, need[dim])} {dim} but "
                f"{fmt_quantity(dim, free[dim])} is free in the cluster"
            )
    return None
