"""TopologyPlacementGenerator: where a pod group with a topology constraint may go.

Mirrors kube-scheduler 1.37 plugins/topologyaware TopologyPlacement.GeneratePlacements:
- no topology constraint: one placement, the parent's (every node);
- with `schedulingConstraints.topology[0].key`: one placement per value of that node
  label, over the parent's nodes that carry it;
- members already scheduled pin the group to their domain; their node missing, or
  without the label, or members in two domains, is an Error ("cannot determine domain
  for already scheduled pods: ...").
Domains come in name order, where Go's map order is random.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from asched.api import Pod
from asched.framework.columns import NodeRows
from asched.framework.handle import Handle
from asched.framework.interfaces import PlacementGeneratePlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import Placement, PodGroupInfo, whole
from asched.framework.registry import PluginSpec
from asched.framework.status import Status, error

NAME = "TopologyPlacementGenerator"


class PlacementError(Exception):
    """The scheduled members' domain cannot be determined."""


class TopologyPlacementGenerator(PlacementGeneratePlugin):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def generate_placements(
        self, group: PodGroupInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[Placement], Status | None]:
        key = group.pod_group.topology_key
        if not key:
            return [whole(nodes)], None
        try:
            return domains(key, nodes, group.scheduled), None
        except PlacementError as exc:
            return [], error(
                f"cannot determine domain for already scheduled pods: {exc}", plugin=NAME
            )


def domains(key: str, nodes: Sequence[NodeInfo], scheduled: Sequence[Pod]) -> list[Placement]:
    """One placement per value of label `key`, restricted to the scheduled members'
    domain when they have one; raises PlacementError as getScheduledPodsTopologyDomain."""
    required = _scheduled_domain(key, nodes, scheduled) if scheduled else ""
    if isinstance(nodes, NodeRows):
        return _domains_from_column(key, nodes, required)
    rows: dict[str, list[int]] = {}
    for i, ni in enumerate(nodes):
        domain = ni.node.labels.get(key) if ni.node is not None else None
        if domain is not None and (not required or domain == required):
            rows.setdefault(domain, []).append(i)
    return [Placement(d, tuple(rows[d])) for d in sorted(rows)]


def _scheduled_domain(key: str, nodes: Sequence[NodeInfo], scheduled: Sequence[Pod]) -> str:
    """getScheduledPodsTopologyDomain: the one domain of the members already on nodes."""
    by_name = {ni.name: ni for ni in nodes}
    required = ""
    for pod in scheduled:
        ni = by_name.get(pod.node_name)
        if ni is None or ni.node is None:
            raise PlacementError(
                f"getting node for pod {pod.key}: node {pod.node_name!r} not found"
            )
        domain = ni.node.labels.get(key)
        if domain is None:
            raise PlacementError(f"no topology domain found for pod {pod.key}")
        if required and required != domain:
            raise PlacementError(f"more than 1 domain found for pod group: {required}, {domain}")
        required = domain
    return required


def _domains_from_column(key: str, nodes: NodeRows, required: str) -> list[Placement]:
    """The same placements as the loop over `nodes` in `domains`, from the label's column
    (kept current row by row): a gang cycle asks for them once per group, over every node
    of the cluster, and the loop's label lookups were most of PlacementGenerate's cost."""
    col = nodes.columns.label(key)
    codes = col.codes[nodes.rows]  # the value code of each position in `nodes`, -1: none
    if required:
        code = col.code(required)
        keep = codes == (code if code is not None else -2)
    else:
        keep = codes >= 0
    positions = np.flatnonzero(keep)
    if not len(positions):
        return []
    # A stable sort by code groups each domain's positions and keeps them in node order.
    by_code = positions[np.argsort(codes[positions], kind="stable")]
    grouped = codes[by_code]
    starts = np.flatnonzero(np.diff(grouped, prepend=-2))
    ends = [*starts[1:].tolist(), len(by_code)]
    found = {
        col.values[int(grouped[a])]: tuple(by_code[a:b].tolist())
        for a, b in zip(starts.tolist(), ends, strict=True)
    }
    return [Placement(d, found[d]) for d in sorted(found)]


SPEC = PluginSpec(NAME, TopologyPlacementGenerator, None)
