"""Victims for a pod group: the fewest, least important units whose removal lets the
whole group fit, the domain being the whole cluster.

Mirrors kube-scheduler's PodGroupEvaluator.selectVictimsOnDomain (framework/preemption):
1. every unit of lower priority than the group is a potential victim. A unit is one pod,
   or, when the pod's PodGroup has `disruptionMode: All`, every scheduled pod of that
   group (domain.GetAllPossibleVictims): it is evicted whole or not at all;
2. with all of them removed the group is simulated once; if it still does not fit, that
   status is the answer and no one is evicted;
3. otherwise the units are added back one by one, most important first (MoreImportantVictim:
   priority, then a group before a pod, then more pods, then earlier start), first those
   whose eviction would violate a PodDisruptionBudget, then the rest; a unit is reprieved
   when the group's chosen assignments still pass Filter with it back. What cannot be
   reprieved is evicted, most important first.
The simulations are the caller's (`fits`): this module only decides, it never touches
the cluster or the scheduler's cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from asched.api import Pod
from asched.plugins.defaultpreemption.pdb import PodDisruptionBudget, pdb_violations
from asched.plugins.defaultpreemption.victims import start_time

NO_VICTIMS_FOR_GROUP = "No preemption victims found for incoming preemptor"


@dataclass(slots=True, frozen=True)
class Unit:
    """One victim: a pod, or a whole group with disruptionMode All (`group` is its key)."""

    pods: tuple[Pod, ...]
    group: str = ""

    @property
    def priority(self) -> int:
        return max(p.priority for p in self.pods)

    def importance(self) -> tuple[int, int, int, float]:
        """Sort key, most important first (MoreImportantVictim, victimRank)."""
        rank = 2 if self.group else 1
        return (-self.priority, -rank, -len(self.pods), min(start_time(p) for p in self.pods))


def victim_units(
    pods: Sequence[Pod], preemptor_priority: int, whole_group: Callable[[Pod], str]
) -> list[Unit]:
    """The potential victims among `pods` (the scheduled pods of the cluster).

    `whole_group(pod)` is the key of the pod's group when that group is disrupted as a
    whole (disruptionMode All), else "". A whole group is a victim only when all of it
    may be preempted (isPreemptionAllowed on the group's priority).
    """
    singles: list[Unit] = []
    groups: dict[str, list[Pod]] = {}
    for p in pods:
        key = whole_group(p)
        if key:
            groups.setdefault(key, []).append(p)
        elif p.priority < preemptor_priority:
            singles.append(Unit((p,)))
    units = [Unit(tuple(ps), key) for key, ps in groups.items()]
    return [u for u in units if u.priority < preemptor_priority] + singles


@dataclass(slots=True)
class GroupVictims:
    """Units to evict, most important first, and how many of them break a budget."""

    units: list[Unit]
    num_pdb_violations: int

    @property
    def pods(self) -> list[Pod]:
        return [p for u in self.units for p in u.pods]

    @property
    def num_group_disruptions(self) -> int:
        return sum(1 for u in self.units if u.group)


async def select_victims_on_domain(
    units: Sequence[Unit],
    pdbs: Sequence[PodDisruptionBudget],
    fits: Callable[[Sequence[Pod]], Awaitable[bool]],
) -> GroupVictims:
    """Reprieve as many of `units` as possible (all of them removed, the group must fit).

    `fits(removed)` answers whether the group's assignments pass Filter with exactly
    `removed` taken away from the cluster.
    """
    ordered = sorted(units, key=Unit.importance)
    counts = pdb_violations([u.pods for u in ordered], pdbs)
    violating = [(u, n) for u, n in zip(ordered, counts, strict=True) if n]
    non_violating = [(u, 0) for u, n in zip(ordered, counts, strict=True) if not n]
    evicted: set[int] = {id(u) for u in ordered}
    chosen: list[Unit] = []
    num_violations = 0
    for unit, n in (*violating, *non_violating):
        evicted.discard(id(unit))
        removed = [p for u in ordered if id(u) in evicted for p in u.pods]
        if await fits(removed):
            continue
        evicted.add(id(unit))
        chosen.append(unit)
        num_violations += n
    chosen.sort(key=Unit.importance)
    return GroupVictims(chosen, num_violations)
