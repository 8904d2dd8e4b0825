"""Comparing asched's outcome of a scenario with kube-scheduler's, and checking both.

Four comparisons, each named so a documented difference can exempt exactly it:
- `scheduled`: which pods got a node, and which existing pods survived (preemption);
- `node`: the node of every pod in expect_same_node or expect_nodes (a pod whose node the
  scenario states has a clear winner, so asched must pick it too), and the sorted
  per-domain pod counts of expect_spread (which domain gets the extra pod may be a tie);
- `message`: which pods were left pending without any event in the first round (before
  `then`), the event reasons of each pod, its first FailedScheduling note (a bound
  preemptor has one too) and its PodScheduled=False condition message, exactly (both saw
  the same N nodes); for pods both bound, the Scheduled note with names replaced;
- `group`: each native PodGroup's PodGroupInitiallyScheduled condition (status, reason,
  message with the namespace replaced), exactly, unless the group is `racy_condition`;
- `volume`: for scenarios with workloads or expect_claims, each claim's phase and whether
  its PV sits on its pod's node, the multiset of volumes bound, and the volume of each
  expect_claims claim (claims.py);
- `allocation`: for scenarios with expect_allocations, every DRA ResourceClaim's
  allocation (devices, nodeSelector exactly) and the pods it is reserved for
  (allocations.py);
- `timing`: for each pod of expect_prompt_retry, whether it was bound within
  PROMPT_RETRY seconds of its last failure (SchedulerPopFromBackoffQ's prompt retry).
`node` also compares the set of nodes the bound pods use when expect_node_set pins it.
`reference_problems` checks the scenario's own claims against kube-scheduler, so a
scenario that stopped testing what it says fails even when both schedulers agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.differential.allocations import allocation_differences, allocation_problems
from tests.differential.claims import claim_differences, claim_problems
from tests.differential.layout import scenario_local
from tests.differential.outcomes import GROUP_CONDITION, ScenarioOutcome
from tests.differential.scenario import Scenario

DOC = Path(__file__).parents[2] / "docs" / "differential.md"

#: A pod requeued while backing off and popped from backoffQ at once is bound within
#: milliseconds of its failure (20-150 ms measured); waiting out the backoff instead takes
#: at least a second (the 1-second backoff, aligned to its window, then the flush tick).
PROMPT_RETRY = 0.9


def _prompt(gap: float | None) -> bool:
    return gap is not None and gap < PROMPT_RETRY


@dataclass(frozen=True, slots=True)
class Mismatch:
    comparison: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.comparison}] {self.detail}"


def _scheduled(o: ScenarioOutcome) -> set[str]:
    return {name for name, p in o.pods.items() if p.scheduled}


def _nodes(o: ScenarioOutcome) -> set[str]:
    """The scenario-local nodes the bound pods use."""
    return {p.node for p in o.pods.values() if p.node}


def differences(s: Scenario, asched: ScenarioOutcome, kube: ScenarioOutcome) -> list[Mismatch]:
    out: list[Mismatch] = []
    a_set, k_set = _scheduled(asched), _scheduled(kube)
    if (len(a_set) != len(k_set)) if s.interchangeable else (a_set != k_set):
        out.append(
            Mismatch(
                "scheduled", f"asched bound {sorted(a_set)}, kube-scheduler bound {sorted(k_set)}"
            )
        )
    if asched.existing_left != kube.existing_left:
        out.append(
            Mismatch(
                "scheduled",
                f"existing pods left: asched "
                f"{sorted(asched.existing_left)}, kube-scheduler "
                f"{sorted(kube.existing_left)}",
            )
        )
    for name in dict.fromkeys((*s.expect_same_node, *s.expect_nodes)):
        a_node, k_node = asched.pods[name].node, kube.pods[name].node
        if a_node != k_node:
            out.append(
                Mismatch("node", f"{name}: asched {a_node or '-'}, kube-scheduler {k_node or '-'}")
            )
    if s.expect_spread:
        a_counts = sorted(asched.spread.values())
        k_counts = sorted(kube.spread.values())
        if a_counts != k_counts:
            out.append(
                Mismatch(
                    "node",
                    f"pods per {s.expect_spread}: asched {asched.spread}, "
                    f"kube-scheduler {kube.spread}",
                )
            )
    if s.expect_node_set is not None and _nodes(asched) != _nodes(kube):
        out.append(
            Mismatch(
                "node",
                f"nodes used: asched {sorted(_nodes(asched))}, "
                f"kube-scheduler {sorted(_nodes(kube))}",
            )
        )
    if s.compares_claims:
        found = claim_differences(s.expect_claims, asched.claims, kube.claims)
        out += [Mismatch("volume", d) for d in found]
    if s.compares_allocations:
        found = allocation_differences(asched.allocations, kube.allocations)
        out += [Mismatch("allocation", d) for d in found]
    a_silent, k_silent = asched.silent, kube.silent
    if (len(a_silent) != len(k_silent)) if s.interchangeable else (a_silent != k_silent):
        out.append(
            Mismatch(
                "message",
                f"pending without any event after the first round: asched {sorted(a_silent)}, "
                f"kube-scheduler {sorted(k_silent)}",
            )
        )
    for g in s.pod_groups:
        if g.racy_condition:
            continue
        a_group, k_group = asched.groups.get(g.name), kube.groups.get(g.name)
        if a_group != k_group:
            a_text = a_group.short() if a_group else "-"
            k_text = k_group.short() if k_group else "-"
            out.append(
                Mismatch(
                    "group",
                    f"PodGroup {g.name} {GROUP_CONDITION}:\n  asched         {a_text}\n"
                    f"  kube-scheduler {k_text}",
                )
            )
    for name in sorted(s.expect_prompt_retry):
        a_gap, k_gap = asched.pods[name].retry_gap, kube.pods[name].retry_gap
        if _prompt(a_gap) != _prompt(k_gap):
            out.append(
                Mismatch(
                    "timing",
                    f"{name} bound after its last failure: asched {a_gap} s, "
                    f"kube-scheduler {k_gap} s (prompt: < {PROMPT_RETRY} s)",
                )
            )
    if s.interchangeable:
        return out + _pooled_messages(asched, kube)
    for name in s.pod_names:
        a, k = asched.pods[name], kube.pods[name]
        if a.scheduled != k.scheduled:
            continue  # reported above
        if s.messages_of is not None and name not in s.messages_of:
            continue
        if a.reasons != k.reasons:
            out.append(
                Mismatch(
                    "message",
                    f"{name} event reasons: asched {a.reasons}, kube-scheduler {k.reasons}",
                )
            )
        if a.scheduled and a.scheduled_note != k.scheduled_note:
            out.append(
                Mismatch(
                    "message",
                    f"{name} Scheduled: asched {a.scheduled_note!r}, "
                    f"kube-scheduler {k.scheduled_note!r}",
                )
            )
        # A bound pod may have failed first (a preemptor: its FailedScheduling says so).
        for what, av, kv in (
            ("FailedScheduling", a.first_failure, k.first_failure),
            ("PodScheduled", a.condition, k.condition),
        ):
            if av != kv:
                out.append(
                    Mismatch(
                        "message",
                        f"{name} {what}:\n  asched         {av!r}\n  kube-scheduler {kv!r}",
                    )
                )
    return out


def _pooled_messages(asched: ScenarioOutcome, kube: ScenarioOutcome) -> list[Mismatch]:
    """Interchangeable pods: the multisets of messages, whichever pod carries them."""
    out = []
    for what, field in (
        ("FailedScheduling", "first_failure"),
        ("PodScheduled", "condition"),
        ("Scheduled", "scheduled_note"),
        ("event reasons", "reasons"),
    ):
        a = sorted(getattr(p, field) for p in asched.pods.values())
        k = sorted(getattr(p, field) for p in kube.pods.values())
        if a != k:
            out.append(
                Mismatch(
                    "message", f"{what} notes:\n  asched         {a!r}\n  kube-scheduler {k!r}"
                )
            )
    return out


def reference_problems(s: Scenario, kube: ScenarioOutcome) -> list[str]:
    """Where kube-scheduler's outcome contradicts the scenario's stated expectations."""
    problems = []
    if s.expect_scheduled is not None and _scheduled(kube) != s.expect_scheduled:
        problems.append(
            f"expected {sorted(s.expect_scheduled)} bound, "
            f"kube-scheduler bound {sorted(_scheduled(kube))}"
        )
    if s.expect_count is not None and len(_scheduled(kube)) != s.expect_count:
        problems.append(
            f"expected {s.expect_count} pods bound, kube-scheduler bound {sorted(_scheduled(kube))}"
        )
    for pod, node in s.expect_nodes.items():
        if kube.pods[pod].node != node:
            problems.append(f"expected {pod} on {node}, kube-scheduler: {kube.pods[pod].short()}")
    for pod in sorted(s.expect_waiting - kube.silent):
        o = kube.pods[pod]
        problems.append(
            f"expected {pod} to wait without events in the first round, kube-scheduler: "
            f"{o.short()} (events {list(o.reasons)})"
        )
    if s.expect_node_set is not None and _nodes(kube) != s.expect_node_set:
        problems.append(
            f"expected the pods on exactly {sorted(s.expect_node_set)}, "
            f"kube-scheduler used {sorted(_nodes(kube))}"
        )
    for w in s.workloads:
        unbound = [n for n in w.replica_names if not kube.pods[n].scheduled]
        if unbound:
            problems.append(f"expected every replica of {w.name} bound, not {unbound}")
    if s.compares_claims:
        workload_claims = [c for w in s.workloads for c in w.claim_names()]
        problems += claim_problems(s.expect_claims, workload_claims, kube.claims)
    problems += allocation_problems(s.expect_allocations, kube.allocations, scenario_local)
    for pod in sorted(s.expect_prompt_retry):
        gap = kube.pods[pod].retry_gap
        if not _prompt(gap):
            problems.append(
                f"expected {pod} bound within {PROMPT_RETRY} s of its last failure, "
                f"kube-scheduler: {gap} s"
            )
    for group, state in s.expect_group.items():
        got = kube.groups.get(group)
        if got is None or got.state != state:
            problems.append(
                f"expected PodGroup {group} {GROUP_CONDITION}={state}, kube-scheduler: "
                f"{got.short() if got else 'no such group'}"
            )
    return problems


def known_difference_problems(
    s: Scenario, asched: ScenarioOutcome, kube: ScenarioOutcome, found: list[Mismatch]
) -> list[str]:
    """How the outcome departs from the documented difference (empty: exactly as documented)."""
    known = s.known_difference
    assert known is not None
    problems = [f"undocumented: {m}" for m in found if m.comparison not in known.differs]
    if not any(m.comparison in known.differs for m in found):
        problems.append(
            f"documented difference {known.doc!r} ({sorted(known.differs)}) is "
            "gone: remove it from the scenario and docs/differential.md"
        )
    a_notes = [p.first_failure for p in asched.pods.values()]
    k_notes = [p.first_failure for p in kube.pods.values()]
    if known.asched and not any(known.asched in n for n in a_notes):
        problems.append(f"no asched message contains {known.asched!r}: {a_notes}")
    if known.kube and not any(known.kube in n for n in k_notes):
        problems.append(f"no kube-scheduler message contains {known.kube!r}: {k_notes}")
    if f"`{known.doc}`" not in DOC.read_text():
        problems.append(f"docs/differential.md has no row `{known.doc}`")
    return problems
