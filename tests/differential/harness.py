"""The differential run: all scenarios through asched, then twice through kube-scheduler.

All sides share one set of kwok nodes (created once, so all see exactly the same N
nodes) and run one after the other, never together; each side's pods are gone before the
next side starts. One scheduler process per side serves every scenario (disjoint node
sets, see layout.py), which keeps the whole comparison to a few scheduler starts.

The reference runs twice, on the same nodes, with fresh namespaces: a scenario whose two
reference outcomes differ by the comparisons of compare.py is unstable - it depends on
something kube-scheduler does not fix (tie-breaking, pod order) - and the tests drop and
report it instead of judging asched against one of the two answers.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
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


@dataclass(frozen=True, slots=True)
class Result:
    asched: ScenarioOutcome
    kube: ScenarioOutcome
    #: How the second reference run differed from the first; empty when stable.
    unstable: tuple[str, ...] = ()


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
            a = await run_side(
                cluster, admin, placements, run=run, side=asched_side, work_dir=work_dir
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
    by_id = {
        s.id: Result(a[s.id], k[s.id], reference_drift(s, k[s.id], k2[s.id])) for s in scenarios
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
