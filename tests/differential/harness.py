"""The differential run: all scenarios through asched, then twice through kube-scheduler.

All sides share one set of kwok nodes (created once, so all see exactly the same N
nodes) and run one after the other, never together; each side's pods are gone before the
next side starts. One scheduler process per side serves every scenario (disjoint node
sets, see layout.py), which keeps the whole comparison to a few scheduler starts.

The reference runs twice, on the same nodes, with fresh namespaces: a scenario whose two
reference outcomes differ by the comparisons of compare.py is unstable - it depends on
something kube-scheduler does not fix (tie-breaking, pod order) - and the tests drop and
report it instead of judging asched against one of the two answers.

ASCHED_DIFF_SIDES=kube-scheduler leaves asched's side out, so the reference can be
studied alone: only the two reference runs are made (the default is
`asched,kube-scheduler`); the tests then check the scenarios' claims against
kube-scheduler and skip the comparison, saying why.
"""

from __future__ import annotations

import dataclasses
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from asched.localcluster import LocalCluster
from tests.differential.cluster_objects import ensure_cluster_objects
from tests.differential.compare import differences
from tests.differential.layout import place
from tests.differential.nodes import scenario_nodes
from tests.differential.outcomes import ScenarioOutcome
from tests.differential.runner import run_side
from tests.differential.scenario import Scenario
from tests.differential.schedulers import ASCHED, KUBE, Side

log = structlog.get_logger(__name__)


SIDES_ENV = "ASCHED_DIFF_SIDES"


class HarnessError(ValueError):
    """The harness's environment switches say something it cannot run."""


def asched_skip_reason(s: Scenario, env: Mapping[str, str] | None = None) -> str:
    """Why asched's side is not run for *s* (empty: it is run)."""
    env = os.environ if env is None else env
    sides = [v.strip() for v in env.get(SIDES_ENV, f"{ASCHED},{KUBE}").split(",") if v.strip()]
    if KUBE not in sides or not set(sides) <= {ASCHED, KUBE}:
        raise HarnessError(
            f"{SIDES_ENV}={env.get(SIDES_ENV)!r}: `{ASCHED},{KUBE}` (default) or `{KUBE}` "
            "(the reference always runs)"
        )
    if ASCHED not in sides:
        return f"asched side not run ({SIDES_ENV}={KUBE}): reference checked only"
    return ""


#: SchedulerPopFromBackoffQ pops from backoffQ only while activeQ is empty, so a prompt
#: retry (expect_prompt_retry) shows only when the run's first round is small: with more
#: pods to schedule than this, the claim is not judged (a run of every scenario keeps
#: activeQ busy for seconds, and both schedulers then wait out the backoff).
IDLE_RUN_PODS = 12


def as_judged(s: Scenario, *, idle: bool) -> Scenario:
    """The scenario with the claims this run can judge."""
    if idle or not s.expect_prompt_retry:
        return s
    return dataclasses.replace(s, expect_prompt_retry=frozenset())


@dataclass(frozen=True, slots=True)
class Result:
    #: None when asched's side was not run (asched_skipped says why).
    asched: ScenarioOutcome | None
    kube: ScenarioOutcome
    #: How the second reference run differed from the first; empty when stable.
    unstable: tuple[str, ...] = ()
    asched_skipped: str = ""
    #: The run was small enough for expect_prompt_retry to be judged (IDLE_RUN_PODS).
    idle: bool = True


@dataclass(frozen=True, slots=True)
class Results:
    by_id: dict[str, Result]
    seconds: float
    nodes: int


async def run_differential(
    cluster: LocalCluster, scenarios: Sequence[Scenario], work_dir: Path
) -> Results:
    began = time.monotonic()
    token = uuid.uuid4().hex[:6]
    run = f"d{token}"
    placements = place(list(scenarios), run)
    asched_side, kube_side = Side(ASCHED, f"as-{token}"), Side(KUBE, f"ks-{token}")
    kube_again = Side(KUBE, f"kr-{token}")
    async with cluster.admin_client() as admin:
        await ensure_cluster_objects(admin)
        async with scenario_nodes(cluster, admin, placements) as nodes:
            skipped = {s.id: asched_skip_reason(s) for s in scenarios}
            for_asched = [p for p in placements if not skipped[p.scenario.id]]
            a = (
                await run_side(
                    cluster, admin, for_asched, run=run, side=asched_side, work_dir=work_dir
                )
                if for_asched
                else {}
            )
            k = await run_side(
                cluster, admin, placements, run=run, side=kube_side, work_dir=work_dir
            )
            k2 = await run_side(
                cluster, admin, placements, run=run, side=kube_again, work_dir=work_dir
            )
    seconds = time.monotonic() - began
    log.info(
        "differential_done", scenarios=len(scenarios), nodes=len(nodes), seconds=round(seconds, 1)
    )
    idle = sum(len(s.pod_names) for s in scenarios) <= IDLE_RUN_PODS
    by_id = {
        s.id: Result(
            a.get(s.id),
            k[s.id],
            reference_drift(as_judged(s, idle=idle), k[s.id], k2[s.id]),
            skipped[s.id],
            idle,
        )
        for s in scenarios
    }
    unstable = sorted(i for i, r in by_id.items() if r.unstable)
    if unstable:
        log.warning("differential_reference_unstable", scenarios=unstable)
    return Results(by_id, seconds, len(nodes))


def reference_drift(
    s: Scenario, first: ScenarioOutcome, second: ScenarioOutcome
) -> tuple[str, ...]:
    """compare.differences between two kube-scheduler runs, worded as such."""
    out = []
    for m in differences(s, first, second):
        detail = m.detail.replace("asched", "run 1").replace("kube-scheduler", "run 2")
        out.append(f"[{m.comparison}] {detail}")
    return tuple(out)
