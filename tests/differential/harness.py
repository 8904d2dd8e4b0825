"""The differential run: all scenarios through asched, then through kube-scheduler.

Both sides share one set of kwok nodes (created once, so both see exactly the same N
nodes) and run one after the other, never together; each side's pods are gone before the
next side starts. One scheduler process per side serves every scenario (disjoint node
sets, see layout.py), which keeps the whole comparison to a few scheduler starts.
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
    async with cluster.admin_client() as admin:
        await ensure_cluster_objects(admin)
        async with scenario_nodes(cluster, admin, placements) as nodes:
            a = await run_side(
                cluster, admin, placements, run=run, side=asched_side, work_dir=work_dir
            )
            k = await run_side(
                cluster, admin, placements, run=run, side=kube_side, work_dir=work_dir
            )
    seconds = time.monotonic() - began
    log.info(
        "differential_done", scenarios=len(scenarios), nodes=len(nodes), seconds=round(seconds, 1)
    )
    return Results({s.id: Result(a[s.id], k[s.id]) for s in scenarios}, seconds, len(nodes))
