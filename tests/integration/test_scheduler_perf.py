"""kube-scheduler's own scheduler_perf workloads run end to end against asched.

The executor reads the workload unmodified from the Go module cache, starts its own
loopback cluster with the workload's feature gates, runs asched as the default scheduler
and every op against the real kube-apiserver. A tiny workload of each kind shows the whole
path works: plain pods with init and measured namespaces (also in backlog mode, where
asched is stopped and restarted around the measured pods), and native gangs (PodGroups,
GenericWorkload) in a namespace made by createNamespaces, and DRA claim templates on nodes
whose devices allocResourceClaims has partly allocated.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from benchmarks.scheduler_perf.config import CreatePods, find_workload
from benchmarks.scheduler_perf.params import resolve
from benchmarks.scheduler_perf.run import PerfOptions, perf_dir, run_workload
from benchmarks.schedulers import ClientLimits, Kind


@pytest.fixture
def perf_root() -> Path:
    if not os.environ.get("GOMODCACHE") and not shutil.which("go"):
        pytest.skip("needs go on PATH (or $GOMODCACHE) to find the module cache")
    return perf_dir()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("selector", "overrides", "pods", "backlog"),
    [
        ("SchedulingBasic/5Nodes", {}, 10, False),
        ("SchedulingBasic/5Nodes", {}, 10, True),
        ("podgroup/gangscheduling/GangScheduling/10Nodes_3Gangs", {}, 9, False),
        # Their gates reach asched as they are: SchedulerAsyncAPICalls=false, then
        # GenericWorkload and TopologyAwareWorkloadScheduling on.
        ("PreemptionBasic/5Nodes", {}, 25, False),
        ("podgroup/tas/TopologyAwareScheduling/10Nodes_3Gangs", {}, 9, False),
        (
            "SchedulingWithResourceClaimTemplate/2000pods_200nodes",
            {"nodesWithDRA": 2, "initClaims": 6, "measurePods": 6},
            6,
            False,
        ),
        # A steady state: 10 pods kept for 10 s, each replaced once scheduled.
        ("SchedulingWithResourceClaimTemplate/empty_500nodes", {"nodesWithDRA": 2}, 10, False),
    ],
    ids=[
        "basic",
        "basic-backlog",
        "gangs",
        "preemption",
        "tas",
        "dra-allocated-claims",
        "dra-steady-state",
    ],
)
async def test_tiny_workload_runs_against_asched(
    perf_root: Path,
    tmp_path: Path,
    *,
    selector: str,
    overrides: dict[str, int],
    pods: int,
    backlog: bool,
) -> None:
    case, workload = find_workload(perf_root, selector)
    opts = PerfOptions(
        case=case,
        workload=workload,
        ops=tuple(resolve(case, workload, overrides)),
        overrides=overrides,
        runs=1,
        schedulers=(Kind.ASCHED,),
        limits=ClientLimits(5000, 5000),
        out_dir=tmp_path,
        wait_timeout=30,
        backlog=backlog,
    )
    document = await run_workload(opts)
    (run,) = document["runs"]
    assert run["outcome"] == "complete", run.get("error")
    (item,) = run["items"]
    assert item["metric"] == "SchedulingThroughput"
    # Every measured pod was seen scheduled by the throughput collector.
    assert item["name"].startswith(f"{case.name}/{workload.name}/")
    assert await anyio.Path(document["path"]).is_file()
    assert document["nodes"] > 0
    assert run["exit_code"] == 0
    assert sum(p["pods"] for p in run["pods_created"]) >= pods
    if any(isinstance(op, CreatePods) and op.steady_state for op in opts.ops):
        # More pods got scheduled than were kept: the scheduled ones were replaced.
        assert item["measured_pods"] > pods
    # allocResourceClaims allocated every init claim before the measured pods.
    assert run["claims_allocated"] == overrides.get("initClaims", 0)
    if backlog:
        # asched was stopped for the measured pods and restarted: all of them bound after
        # the window opened at the first bind (which opens it, uncounted).
        assert item["measured_pods"] <= pods - 1
        assert len(item["data"]) in (0, 5)


@pytest.mark.timeout(60)
async def test_a_gate_asched_cannot_honour_fails_its_run_naming_the_gate(
    perf_root: Path, tmp_path: Path
) -> None:
    """PreemptionAsync/5000Nodes turns SchedulerAsyncPreemption off: asched refuses to
    start, and the run says why instead of measuring asched with the gate ignored."""
    overrides = {"initNodes": 2, "initPods": 4, "measurePods": 2}
    case, workload = find_workload(perf_root, "PreemptionAsync/5000Nodes")
    opts = PerfOptions(
        case=case,
        workload=workload,
        ops=tuple(resolve(case, workload, overrides)),
        overrides=overrides,
        runs=1,
        schedulers=(Kind.ASCHED,),
        limits=ClientLimits(5000, 5000),
        out_dir=tmp_path,
        wait_timeout=30,
    )
    document = await run_workload(opts)
    (run,) = document["runs"]
    assert run["outcome"] == "failed"
    assert "cannot set feature gate SchedulerAsyncPreemption to false" in run["error"]
