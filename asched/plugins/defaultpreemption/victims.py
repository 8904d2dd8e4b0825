"""The dry run on one node: the fewest, least important pods whose removal lets the pod fit.

Mirrors kube-scheduler DefaultPreemption.SelectVictimsOnNode:
1. remove every pod of lower priority (keeping PreFilter state right through the
   PreFilter extensions' RemovePod);
2. if the preemptor still does not fit (Filter, with nominated pods counted), the node
   is no candidate and that Filter status says why; with no lower-priority pod at all it
   is UnschedulableAndUnresolvable "No preemption victims found for incoming pod";
3. otherwise add the removed pods back one by one, most important first, keeping each
   one the preemptor still fits with ("reprieve"): first those whose eviction would
   violate a PodDisruptionBudget, then the rest. What cannot be reprieved is a victim.
Victims come back ordered by importance (priority, then earlier start first).

The caller passes clones: this mutates `node_info` and `state`.
Importance uses the pod's creationTimestamp where upstream uses status.startTime (asched's
Pod does not decode startTime; the two differ only for pods that started late).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.handle import Handle
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status, unresolvable
from asched.plugins.defaultpreemption.pdb import PodDisruptionBudget, split_by_pdb_violation

NO_VICTIMS = "No preemption victims found for incoming pod"
# PodEligibleToPreemptOthers for a pod, and PodGroupEvaluator for a group, with
# preemptionPolicy Never.
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."


def start_time(pod: Pod) -> float:
    return pod.creation_timestamp


def importance(pod: Pod) -> tuple[int, float]:
    """Sort key, most important first: higher priority, then earlier start (MoreImportantPod)."""
    return (-pod.priority, start_time(pod))


def may_preempt(victim: Pod, preemptor: Pod) -> bool:
    """Only pods of strictly lower priority are eligible victims (isPreemptionAllowed)."""
    return victim.priority < preemptor.priority


@dataclass(slots=True)
class NodeVictims:
    """The outcome of one node's dry run; `status` is None when the pod fits with `pods` gone."""

    pods: list[Pod]
    num_pdb_violations: int
    status: Status | None


class _DryRunError(Exception):
    def __init__(self, status: Status) -> None:
        self.status = status


def _raise_unless_success(st: Status | None) -> None:
    # Upstream turns any non-success of the extensions into an error (status.AsError()).
    if st is not None and not st.is_success():
        raise _DryRunError(Status(Code.ERROR, st.reasons, st.plugin, st.error))


async def select_victims_on_node(
    handle: Handle,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    pdbs: Sequence[PodDisruptionBudget],
) -> NodeVictims:
    def remove(p: Pod) -> None:
        node_info.remove_pod(p)
        _raise_unless_success(handle.run_pre_filter_extension_remove_pod(state, pod, p, node_info))

    def add(p: Pod) -> None:
        node_info.add_pod(p)
        _raise_unless_success(handle.run_pre_filter_extension_add_pod(state, pod, p, node_info))

    potential = [p for p in node_info.pods if may_preempt(p, pod)]
    try:
        for p in potential:
            remove(p)
        if not potential:
            return NodeVictims([], 0, unresolvable(NO_VICTIMS))
        # Affinity of the preemptor to a lower-priority pod is not tried to be kept
        # (upstream decided against it for performance): such a node simply fails here.
        st = await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if st is not None and not st.is_success():
            return NodeVictims([], 0, st)

        potential.sort(key=importance)
        violating, non_violating = split_by_pdb_violation(potential, pdbs)
        victims: list[Pod] = []

        async def reprieve(p: Pod) -> bool:
            add(p)
            fit = await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            if fit is None or fit.is_success():
                return True
            remove(p)
            victims.append(p)
            return False

        num_violating = 0
        for p in violating:
            if not await reprieve(p):
                num_violating += 1
        for p in non_violating:
            await reprieve(p)
    except _DryRunError as exc:
        return NodeVictims([], 0, exc.status)
    if violating and non_violating:
        # The two passes each appended in importance order; merge them back into one.
        victims.sort(key=importance)
    return NodeVictims(victims, num_violating, None)
