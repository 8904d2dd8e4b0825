"""PodDisruptionBudgets as preemption reads them, and which victims would violate one.

Preemption prefers victims whose eviction keeps every budget intact. It needs only a
budget's namespace, selector, `status.disruptionsAllowed` and the names in
`status.disruptedPods`, so a policy/v1 PodDisruptionBudget is decoded into exactly that.

Guarantees (kube-scheduler defaultpreemption filterPodsWithPDBViolation):
- a budget whose selector is absent, empty or unreadable matches no pod (upstream's
  LabelSelectorAsSelector error or `selector.Empty()` both skip the budget), so a bad
  selector never makes the informer drop the object;
- a pod already listed in `disruptedPods` has been counted by the API server and does not
  use up the budget again;
- the split keeps the input order within each group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asched.api import DecodeError, Pod
from asched.api.labels import LabelSelector, parse_label_selector
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest


@dataclass(slots=True, frozen=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    # None when the budget selects nothing (absent or unreadable selector).
    selector: LabelSelector | None
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()

    def selects(self, pod: Pod) -> bool:
        sel = self.selector
        if sel is None or sel.is_empty() or pod.namespace != self.namespace:
            return False
        return sel.matches(pod.labels)


def decode_pdb(raw: dict[str, Any]) -> PodDisruptionBudget:
    meta = raw.get("metadata") or {}
    ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    try:
        selector = parse_label_selector(spec.get("selector"), "spec.selector")
    except ValueError:
        selector = None
    allowed = status.get("disruptionsAllowed") or 0
    if isinstance(allowed, bool) or not isinstance(allowed, int):
        raise DecodeError(
            "PodDisruptionBudget",
            f"{ns}/{name}",
            "status.disruptionsAllowed",
            f"expected an integer, got {allowed!r}",
        )
    disrupted = status.get("disruptedPods") or {}
    if not isinstance(disrupted, dict):
        raise DecodeError(
            "PodDisruptionBudget", f"{ns}/{name}", "status.disruptedPods", "expected an object"
        )
    return PodDisruptionBudget(ns, name, selector, allowed, frozenset(str(k) for k in disrupted))


PDB_INFORMER: InformerRequest[PodDisruptionBudget] = InformerRequest(
    resource="poddisruptionbudgets.policy/v1",
    list_path="/apis/policy/v1/poddisruptionbudgets",
    decode=decode_pdb,
    event_resource=EventResource.POD_DISRUPTION_BUDGET,
)


def pdb_violations(
    units: Sequence[Sequence[Pod]], pdbs: Sequence[PodDisruptionBudget]
) -> list[int]:
    """How many of each unit's pods, evicted in this order, would break a budget.

    Each budget's allowance is spent by the pods it selects in order; a pod is violating
    when some budget it belongs to goes below zero with it. As in kube-scheduler's
    FilterVictimsWithPDBViolation (podIsViolating), the budgets after the first one that
    goes below zero are not charged for that pod. A unit is one victim: a pod, or a
    whole pod group taken together (its ViolateCount).
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    counts: list[int] = []
    for unit in units:
        count = 0
        for pod in unit:
            # A pod without labels matches no selector.
            if not pod.labels:
                continue
            for i, pdb in enumerate(pdbs):
                if not pdb.selects(pod) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    count += 1
                    break
        counts.append(count)
    return counts


def split_by_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """(violating, non_violating): would evicting the pods, in this order, break a budget?"""
    counts = pdb_violations([(p,) for p in pods], pdbs)
    violating = [p for p, n in zip(pods, counts, strict=True) if n]
    non_violating = [p for p, n in zip(pods, counts, strict=True) if not n]
    return violating, non_violating
