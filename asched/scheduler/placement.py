"""Where a pod group may go: the candidate placements of a group cycle, and the best one.

kube-scheduler 1.37 with TopologyAwareWorkloadScheduling evaluates a pod group once per
placement (a set of nodes) and keeps the best feasible one:
- TopologyPlacementGenerator.GeneratePlacements: no topology constraint, one placement
  (every node); with `schedulingConstraints.topology[0].key`, one placement per value of
  that node label, over the nodes that carry it; members already scheduled pin the
  group to their domain (more than one domain is an error);
  RunPlacementGeneratePlugins: no placement at all is "no feasible placements found";
- PodGroupPodsCount.ScorePlacement: members already scheduled plus members the placement
  places, normalized to 0..100 by the highest (weight 1, the only PlacementScore plugin).
Go breaks a tie between equal scores at random (findBestPlacement's Randomizer). asched
decides it instead: the placement that leaves the least free CPU, then the least free
memory, on its nodes after the group is placed (the tightest fit, so big domains stay
free for big groups), then the domain name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from asched.api import Pod
from asched.framework.columns import NodeRows
from asched.framework.nodeinfo import NodeInfo

NO_FEASIBLE_PLACEMENTS = "no feasible placements found"
MAX_SCORE = 100


@dataclass(slots=True, frozen=True)
class Placement:
    """A candidate set of nodes; `rows` index the snapshot's node list."""

    name: str
    rows: tuple[int, ...]

    def nodes(self, all_nodes: Sequence[NodeInfo]) -> Sequence[NodeInfo]:
        """The placement's current NodeInfos (the snapshot replaces them as pods are
        assumed, so they are looked up again for every member)."""
        if len(self.rows) == len(all_nodes):
            return all_nodes
        picked = [all_nodes[i] for i in self.rows]
        if isinstance(all_nodes, NodeRows):
            return NodeRows(picked, all_nodes.columns, np.asarray(self.rows, dtype=np.int64))
        return picked


class PlacementError(Exception):
    """The group's placements cannot be computed (an Error status for the group)."""


def generate(
    topology_key: str, all_nodes: Sequence[NodeInfo], scheduled: Sequence[Pod]
) -> list[Placement]:
    """GeneratePlacements; domains in name order (Go's map order is random)."""
    if not topology_key:
        return [Placement("", tuple(range(len(all_nodes))))]
    by_name = {ni.name: ni for ni in all_nodes}
    required = ""
    for pod in scheduled:
        ni = by_name.get(pod.node_name)
        if ni is None or ni.node is None:
            raise PlacementError(
                "cannot determine domain for already scheduled pods: getting node for pod "
                f"{pod.key}: node {pod.node_name!r} not found"
            )
        domain = ni.node.labels.get(topology_key)
        if domain is None:
            raise PlacementError(
                "cannot determine domain for already scheduled pods: no topology domain "
                f"found for pod {pod.key}"
            )
        if required and required != domain:
            raise PlacementError(
                "cannot determine domain for already scheduled pods: more than 1 domain "
                f"found for pod group: {required}, {domain}"
            )
        required = domain
    rows: dict[str, list[int]] = {}
    for i, ni in enumerate(all_nodes):
        domain = ni.node.labels.get(topology_key) if ni.node is not None else None
        if domain is not None and (not required or domain == required):
            rows.setdefault(domain, []).append(i)
    return [Placement(d, tuple(rows[d])) for d in sorted(rows)]


@dataclass(slots=True, frozen=True)
class Candidate:
    placement: Placement
    placed: int  # members this placement places
    free_cpu: int  # milli-CPU left free on its nodes after them
    free_memory: int


def best(candidates: Sequence[Candidate], scheduled_before: int) -> Candidate:
    """PodGroupPodsCount's normalized score, then asched's tie rule (module docstring)."""
    counts = [scheduled_before + c.placed for c in candidates]
    top = max(counts) or 1
    scores = [c * MAX_SCORE // top for c in counts]
    ranked = sorted(
        zip(scores, candidates, strict=True),
        key=lambda sc: (-sc[0], sc[1].free_cpu, sc[1].free_memory, sc[1].placement.name),
    )
    return ranked[0][1]


def leftover(placement: Placement, all_nodes: Sequence[NodeInfo]) -> tuple[int, int]:
    """Free CPU and memory on the placement's nodes as the snapshot now has them (called
    while the group's members are assumed)."""
    cpu = mem = 0
    for ni in placement.nodes(all_nodes):
        cpu += ni.allocatable.milli_cpu - ni.requested.milli_cpu
        mem += ni.allocatable.memory - ni.requested.memory
    return cpu, mem
