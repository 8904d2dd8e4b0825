"""Why a pod fits nowhere, and kube-scheduler's exact FailedScheduling wording.

Mirrors pkg/scheduler/framework FitError.Error(): `0/N nodes are available:` followed by
the PreFilter message, or else the per-node reasons counted and sorted as strings
(`3 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector`), then the
PostFilter (preemption) message, each as ` <msg>.`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asched.framework.status import Code, Status
from asched.framework.types import NodeToStatus

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin or not status.is_rejected():
            return
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)
        else:
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """No node fits the pod (kube-scheduler framework.FitError)."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        # What PostFilter (preemption) said about the pod's nominated node: None leaves
        # it alone, "" clears it, a name nominates that node.
        self.nominated_node_name: str | None = None
        super().__init__(pod_key)

    def message(self) -> str:
        d = self.diagnosis
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            counts: dict[str, int] = {}
            statuses = d.node_to_status
            # Counted per distinct Status (the map's tally), not per node: the counts are
            # the same, and a columnar Filter pass's deferred map is never built for it
            # (hundreds of rejected nodes share a handful of Status objects).
            for st, n in statuses.tally_by_id().values():
                if n > 0:
                    for reason in st.reasons:
                        counts[reason] = counts.get(reason, 0) + n
            absent = self.num_all_nodes - len(statuses)
            if absent > 0 and statuses.absent is not None:
                for reason in statuses.absent.reasons:
                    counts[reason] = counts.get(reason, 0) + absent
            parts = sorted(f"{n} {reason}" for reason, n in counts.items())
            if parts:
                msg += f" {', '.join(parts)}."
        if d.post_filter_msg:
            # No period after the PostFilter message: kube-scheduler 1.37 adds none
            # (observed side by side by tests/differential).
            msg += f" {d.post_filter_msg}"
        return msg

    def __str__(self) -> str:
        return self.message()


def one_node_fit_message(pod_key: str, node: str, status: Status) -> str:
    """How kube-scheduler words a Reserve, Permit or WaitOnPermit rejection: as a FitError
    with NumAllNodes 1 and the node's status (schedulingCycle, bindingCycle):
    "0/1 nodes are available: 1 <reason>."."""
    diagnosis = Diagnosis()
    diagnosis.node_to_status.set(node, status)
    diagnosis.add_plugin_status(status)
    return FitError(pod_key, 1, diagnosis).message()


class NoNodesAvailable(Exception):
    def __str__(self) -> str:
        return NO_NODES_AVAILABLE
