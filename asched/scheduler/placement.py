"""The best placement of a group cycle: the PlacementScore plugins' total, then asched's
tie rule.

kube-scheduler 1.37 evaluates a pod group once per placement its PlacementGenerate plugin
proposes (Go's TopologyPlacementGenerator by default) and keeps the feasible one with the
highest total of the PlacementScore plugins (findBestPlacement; Go's PodGroupPodsCount).
Go breaks a tie between equal totals at random (findBestPlacement's Randomizer). asched
decides it instead: the placement that leaves the least free CPU, then the least free
memory, on its nodes after the group is placed (the tightest fit, so big domains stay
free for big groups), then the domain name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from asched.framework.columns import NodeRows
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement


@dataclass(slots=True, frozen=True)
class Candidate:
    placement: Placement
    placed: int  # members this placement places
    free_cpu: int  # milli-CPU left free on its nodes after them
    free_memory: int


def best(candidates: Sequence[Candidate], totals: Sequence[int]) -> Candidate:
    """The highest total (aligned with `candidates`), then asched's tie rule."""
    ranked = sorted(
        zip(totals, candidates, strict=True),
        key=lambda sc: (-sc[0], sc[1].free_cpu, sc[1].free_memory, sc[1].placement.name),
    )
    return ranked[0][1]


def leftover(placement: Placement, all_nodes: Sequence[NodeInfo]) -> tuple[int, int]:
    """Free CPU and memory on the placement's nodes as the snapshot now has them (called
    while the group's members are assumed)."""
    nodes = placement.nodes(all_nodes)
    if isinstance(nodes, NodeRows):
        # The columns hold each row's allocatable and requested CPU and memory (the same
        # integers as the NodeInfos, kept current by set_row): two numpy sums per
        # placement instead of a Python loop over its nodes.
        cols, rows = nodes.columns, nodes.rows
        cpu_free = cols.alloc_cpu[rows] - cols.req_cpu[rows]
        mem_free = cols.alloc_mem[rows] - cols.req_mem[rows]
        return int(cpu_free.sum()), int(mem_free.sum())
    cpu = mem = 0
    for ni in nodes:
        cpu += ni.allocatable.milli_cpu - ni.requested.milli_cpu
        mem += ni.allocatable.memory - ni.requested.memory
    return cpu, mem
