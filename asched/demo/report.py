"""The demo's closing table: each pod, its scheduler, its node (or pending) and why."""

from __future__ import annotations

from dataclasses import dataclass

from asched.demo.progress import PodState
from asched.demo.workload import Workload
from asched.explain.table import format_table

PENDING = "pending"


@dataclass(frozen=True, slots=True)
class Row:
    pod: str
    scheduler: str
    node: str
    why: str


def build_rows(workload: Workload, states: dict[str, PodState]) -> list[Row]:
    """One row per workload pod, in submission order.

    Why: for a placed pod, what it demonstrates; for a pending one, the scheduler's own
    words (its latest FailedScheduling Event, else the PodScheduled condition).
    """
    rows = []
    for pod in workload.pods:
        st = states.get(pod.name, PodState(pod.name))
        if st.node:
            rows.append(Row(pod.name, pod.scheduler, st.node, pod.shows))
            continue
        why = st.failure or st.condition or "not scheduled yet (no FailedScheduling event)"
        rows.append(Row(pod.name, pod.scheduler, PENDING, why))
    return rows


def render_rows(rows: list[Row]) -> list[str]:
    return format_table(
        ("POD", "SCHEDULER", "NODE", "WHY"),
        [(r.pod, r.scheduler, r.node, r.why) for r in rows],
    )
