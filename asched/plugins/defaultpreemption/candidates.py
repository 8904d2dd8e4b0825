"""Finding preemption candidates across nodes, and picking the one to preempt on.

Mirrors kube-scheduler's preemption Evaluator (framework/preemption/preemption.go):
- DryRunPreemption: nodes are visited from a random offset, wrapping around; each gets a
  dry run on clones of its NodeInfo and of the CycleState (the snapshot is never
  mutated). The run stops once it has at least one candidate that violates no
  PodDisruptionBudget and `num_candidates` in all; candidates without violations come
  first. Upstream runs the dry runs in parallel goroutines; here they run one after the
  other, yielding to the event loop after each node (a dry run is many Filter calls).
- pickOneNodeForPreemption: fewest PDB violations, then the lowest highest-priority
  victim, the smallest sum of victim priorities, the fewest victims, the latest start of
  the highest-priority victims; remaining ties go to the first candidate (upstream's map
  order makes that "sort of random"; ours is the dry-run order, which starts at random).
- FitError wording for "no candidate": `0/N nodes are available: <count> <reason>, ...`
  with nodes that were no candidate at all counted as "Preemption is not helpful for
  scheduling".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import anyio

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.handle import Handle
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code, Status
from asched.plugins.defaultpreemption.pdb import PodDisruptionBudget
from asched.plugins.defaultpreemption.victims import select_victims_on_node, start_time

NOT_HELPFUL = "Preemption is not helpful for scheduling"
# Added to every priority before summing, so a few negative-priority victims never look
# cheaper than fewer victims of the same priority (upstream adds MaxInt32+1).
_PRIORITY_OFFSET = 2**31


@dataclass(slots=True)
class Candidate:
    node_name: str
    # Most important first.
    victims: list[Pod]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class DryRunResult:
    candidates: list[Candidate]
    # Why each node that was tried is no candidate.
    statuses: dict[str, Status] = field(default_factory=dict)
    errors: list[Status] = field(default_factory=list)


async def dry_run_preemption(
    handle: Handle,
    state: CycleState,
    pod: Pod,
    potential_nodes: Sequence[NodeInfo],
    pdbs: Sequence[PodDisruptionBudget],
    *,
    offset: int,
    num_candidates: int,
) -> DryRunResult:
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    result = DryRunResult([])
    n = len(potential_nodes)
    for i in range(n):
        node_info = potential_nodes[(offset + i) % n].clone()
        found = await select_victims_on_node(handle, state.clone(), pod, node_info, pdbs)
        st = found.status
        if st is None and found.pods:
            c = Candidate(node_info.name, found.pods, found.num_pdb_violations)
            group = non_violating if c.num_pdb_violations == 0 else violating
            # Upstream's candidate lists hold at most num_candidates each.
            if len(group) < num_candidates:
                group.append(c)
            if non_violating and len(non_violating) + len(violating) >= num_candidates:
                break
        else:
            if st is None:
                why = f'expected at least one victim pod on node "{node_info.name}"'
                st = Status(Code.ERROR, (why,))
            if st.code == Code.ERROR:
                result.errors.append(st)
            result.statuses[node_info.name] = st
        await anyio.lowlevel.checkpoint()
    result.candidates = non_violating + violating
    return result


def _earliest_start_of_top_victims(victims: Sequence[Pod]) -> float:
    """util.GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    top = max(v.priority for v in victims)
    return min(start_time(v) for v in victims if v.priority == top)


_CRITERIA: tuple[Callable[[Candidate], float], ...] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -c.victims[0].priority,
    lambda c: -sum(v.priority + _PRIORITY_OFFSET for v in c.victims),
    lambda c: -len(c.victims),
    lambda c: _earliest_start_of_top_victims(c.victims),
)


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """Each criterion keeps the best-scoring candidates; the next breaks their ties."""
    remaining = list(candidates)
    if not remaining:
        return None
    for score in _CRITERIA:
        if len(remaining) == 1:
            break
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
    return remaining[0]


def no_candidate_message(num_all_nodes: int, statuses: Mapping[str, Status]) -> str:
    """framework.FitError.Error() over the dry run's statuses (absent nodes: not helpful)."""
    counts: dict[str, int] = {}
    for st in statuses.values():
        for reason in st.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + absent
    msg = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg
