"""One upstream workload against both schedulers, repetition by repetition.

The method is the side-by-side runner's (benchmarks/runner.py): the same loopback
control plane with kwok, the same scheduler processes and configuration
(benchmarks/schedulers.py: same client qps/burst, leader election off), CPU read from
/proc, the load average recorded with every run, and the schedulers' order rotated
between repetitions so a paired ratio compares two runs made back to back.

What differs is forced by scheduler_perf's semantics: its ops create nodes and pods while
the scheduler runs (init pods are scheduled before the measured ones are created), so each
run gets a fresh cluster, as each upstream workload gets a fresh etcd and API server, and
its scheduler serves "default-scheduler" so the templates' pods need no change. The
workload's feature gates go to kube-apiserver and kube-controller-manager (with the gates
the local cluster always sets) and to the scheduler, and kube-apiserver runs without the
Priority admission plugin, as util.go mustSetupCluster sets it up.
"""

from __future__ import annotations

import math
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson
import structlog

from asched.localcluster import LocalCluster
from asched.localcluster.components import APISERVER, CONTROLLER_MANAGER, NATIVE_GANG_GATES
from benchmarks import procstat
from benchmarks.profiling import PySpy
from benchmarks.runner import git_state, machine, rotate
from benchmarks.scheduler_perf.config import CreateNodes, CreatePods, Op, TestCase, Workload
from benchmarks.scheduler_perf.executor import DataItem, WorkloadError, WorkloadExecutor
from benchmarks.scheduler_perf.gotemplate import Value
from benchmarks.scheduler_perf.podstore import PodStore
from benchmarks.schedulers import ClientLimits, Kind, SchedulerProcess, SchedulerSetup
from benchmarks.stats import median_or_nan, ratio

log = structlog.get_logger(__name__)

K8S_VERSION = "v1.37.2"
PERF_SUBDIR = "test/integration/scheduler_perf"
DEFAULT_SCHEDULER = "default-scheduler"
#: util.go mustSetupCluster's admission plugins off (Priority: templates set spec.priority).
ADMISSION_OFF = "ServiceAccount,TaintNodesByCondition,Priority"
#: ... and the resource.k8s.io versions it serves with DynamicResourceAllocation.
DRA_VERSIONS = ("resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3")


def perf_dir(version: str = K8S_VERSION) -> Path:
    """test/integration/scheduler_perf of k8s.io/kubernetes@version in the Go module cache
    (`go env GOMODCACHE`, or $GOMODCACHE without a go binary on PATH)."""
    cache = os.environ.get("GOMODCACHE", "")
    try:
        cache = subprocess.run(
            ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        if not cache:
            raise SystemExit("cannot find the Go module cache: put go on PATH") from None
    path = Path(cache) / f"k8s.io/kubernetes@{version}" / PERF_SUBDIR
    if not path.is_dir():
        raise SystemExit(f"{path} is missing: run hack/env.sh (it fills the module cache)")
    return path


def merged_gates(case: TestCase, workload: Workload) -> dict[str, bool]:
    """featureGatesMerge: the workload's gates override the test case's."""
    return {**case.feature_gates, **workload.feature_gates}


#: kube-controller-manager's client limits (util.go mustSetupCluster's cfg.QPS/Burst).
CONTROLLER_CLIENT = ("--kube-api-qps=5000", "--kube-api-burst=5000")


def cluster_args(gates: Mapping[str, bool]) -> dict[str, list[str]]:
    control_plane = {**dict.fromkeys(NATIVE_GANG_GATES, True), **gates}
    flag = "--feature-gates=" + ",".join(f"{g}={str(v).lower()}" for g, v in control_plane.items())
    runtime = ["scheduling.k8s.io/v1beta1=true"]
    if gates.get("DynamicResourceAllocation"):
        runtime += [f"{v}=true" for v in DRA_VERSIONS]
    return {
        APISERVER: [
            flag,
            f"--disable-admission-plugins={ADMISSION_OFF}",
            f"--runtime-config={','.join(runtime)}",
        ],
        # util.go gives its in-process controllers (garbage collector, namespace,
        # resourceclaim) the test's client, qps/burst 5000. kube-controller-manager's
        # default, 20 per controller, held the DRA steady-state workloads at 4-5 pods/s
        # for both schedulers: its resourceclaim controller makes four or five calls per
        # pod (create the claim, apply the pod's status, unreserve, unfinalize and
        # delete the claim: pkg/controller/resourceclaim).
        CONTROLLER_MANAGER: [flag, *CONTROLLER_CLIENT],
    }


def node_count(ops: Sequence[Op]) -> int:
    return sum(op.count for op in ops if isinstance(op, CreateNodes))


@dataclass(frozen=True)
class PerfOptions:
    case: TestCase
    workload: Workload
    ops: tuple[Op, ...]
    overrides: Mapping[str, Value]
    runs: int
    schedulers: tuple[Kind, ...]
    limits: ClientLimits
    out_dir: Path
    wait_timeout: float = 600.0
    #: Create each measured createPods op's pods while the scheduler is stopped.
    backlog: bool = False
    #: py-spy executable: sample asched from its (re)start before the measured pods
    #: (benchmarks.profiling); the collapsed stacks go beside the results.
    py_spy: Path | None = None


def _item_json(item: DataItem) -> dict[str, Any]:
    return {
        "name": item.name,
        "metric": item.metric,
        "data": item.data,
        "unit": item.unit,
        "threshold": item.threshold,
        "passed": item.passed,
        "measured_pods": item.measured_pods,
        "window_s": item.window_s,
        "cpu_seconds": item.cpu_seconds,
        "created_per_s": item.created_per_s,
        "bind_window_pods_per_s": item.bind_window_pods_per_s,
        "cpu_ms_per_pod": item.cpu_seconds * 1000 / item.measured_pods
        if item.measured_pods
        else None,
    }


async def one_run(opts: PerfOptions, kind: Kind, repetition: int, work_dir: Path) -> dict[str, Any]:
    gates = merged_gates(opts.case, opts.workload)
    setup = SchedulerSetup(opts.limits, scheduler_name=DEFAULT_SCHEDULER, feature_gates=gates)
    result: dict[str, Any] = {
        "scheduler": kind.value,
        "repetition": repetition,
        "loadavg_before": list(os.getloadavg()),
    }
    began = time.monotonic()
    async with LocalCluster(unthrottled=True, extra_args=cluster_args(gates)) as cluster:
        proc = SchedulerProcess(
            kind,
            setup,
            work_dir=work_dir,
            admin_kubeconfig=cluster.admin_kubeconfig,
            scheduler_kubeconfig=cluster.scheduler_kubeconfig,
        )
        async with (
            cluster.admin_client(connections=64, timeout=600) as client,
            anyio.create_task_group() as tg,
        ):
            spy: PySpy | None = None
            store = PodStore(client)
            tg.start_soon(store.run)
            await store.wait_synced()
            try:
                await proc.start()
                with anyio.fail_after(120):
                    await proc.wait_ready()
                spy = (
                    PySpy(
                        opts.py_spy,
                        opts.out_dir / f"{_label(opts)}-{kind.value}-{repetition}.folded",
                    )
                    if opts.py_spy is not None and kind.is_asched
                    else None
                )
                if spy is not None and not restarts_scheduler(opts):
                    await spy.attach(proc.pid)
                control = _Restart(proc, spy) if opts.backlog else None
                executor = WorkloadExecutor(
                    client,
                    store,
                    opts.case,
                    opts.workload.threshold,
                    tg,
                    workload_name=opts.workload.name,
                    scheduler_cpu=lambda: _cpu(proc),
                    wait_timeout=opts.wait_timeout,
                    backlog=control,
                )
                items = await executor.run(opts.ops)
                result["outcome"] = "complete"
                result["items"] = [_item_json(i) for i in items]
                result["peak_rss_mib"] = procstat.usage(proc.pid).peak_rss_bytes / 2**20
                result["claims_allocated"] = executor.claims_allocated
                result["pods_created"] = [
                    {"pods": n, "seconds": s} for n, s in executor.creation if n > 1
                ]
            except (WorkloadError, TimeoutError, RuntimeError) as err:
                result["outcome"] = "failed"
                result["error"] = str(err)
                log.warning("workload_failed", scheduler=kind.value, error=str(err))
            finally:
                tg.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    if spy is not None:
                        await spy.stop()
                        result["profile"] = str(spy.output)
                    result["exit_code"] = await proc.stop()
    result["run_s"] = time.monotonic() - began
    result["loadavg_after"] = list(os.getloadavg())
    log.info(
        "perf_run_done", scheduler=kind.value, repetition=repetition, outcome=result["outcome"]
    )
    return result


def _cpu(proc: SchedulerProcess) -> float:
    return procstat.cpu_seconds_or_nan(proc.pid) if proc.running() else math.nan


def restarts_scheduler(opts: PerfOptions) -> bool:
    """Backlog mode restarts the scheduler for a measured createPods op, except a steady
    state one (create_pods's `backlog`); py-spy attaches at that restart, or else at start."""
    return opts.backlog and any(
        isinstance(op, CreatePods) and op.collect_metrics and not op.steady_state for op in opts.ops
    )


class _Restart:
    """Backlog mode's SchedulerControl over one SchedulerProcess (and its profiler)."""

    def __init__(self, proc: SchedulerProcess, spy: PySpy | None) -> None:
        self.proc = proc
        self.spy = spy

    async def stop(self) -> None:
        await self.proc.stop()

    async def start(self) -> None:
        await self.proc.start()
        if self.spy is not None:
            await self.spy.attach(self.proc.pid)
        with anyio.fail_after(120):
            await self.proc.wait_ready()


def measured(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The run's SchedulingThroughput item (the last, as a workload has one)."""
    items = [i for i in run.get("items") or [] if i.get("data")]
    return items[-1] if items else None


def summarize(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Medians per scheduler and asched/kube-scheduler ratios of the same repetition."""
    per: dict[str, dict[str, float]] = {}
    for who in sorted({r["scheduler"] for r in runs}):
        items = [m for r in runs if r["scheduler"] == who and (m := measured(r))]
        mine = [r for r in runs if r["scheduler"] == who]
        per[who] = {
            "pods_per_s": median_or_nan([i["data"]["Average"] for i in items]),
            "cpu_ms_per_pod": median_or_nan(
                [i["cpu_ms_per_pod"] for i in items if i["cpu_ms_per_pod"] is not None]
            ),
            "loadavg_1m": median_or_nan([r["loadavg_before"][0] for r in mine]),
            "created_per_s": median_or_nan([i.get("created_per_s", math.nan) for i in items]),
            "bind_window_pods_per_s": median_or_nan(
                [i.get("bind_window_pods_per_s", math.nan) for i in items]
            ),
            "complete_runs": float(sum(1 for r in mine if r["outcome"] == "complete")),
        }
    throughput = _paired(runs, lambda m: float(m["data"]["Average"]))
    window = _paired(runs, lambda m: float(m.get("bind_window_pods_per_s", math.nan)))
    return {
        "per_scheduler": per,
        "paired_ratios": throughput,
        "paired_ratio_median": median_or_nan(throughput),
        "paired_bind_window_ratios": window,
        "paired_bind_window_ratio_median": median_or_nan(window),
    }


def _paired(
    runs: Sequence[Mapping[str, Any]], value_of: Callable[[Mapping[str, Any]], float]
) -> list[float]:
    """asched's value over kube-scheduler's, per repetition both measured."""
    by_rep: dict[tuple[str, int], float] = {}
    for r in runs:
        m = measured(r)
        if m is not None:
            by_rep[(r["scheduler"], r["repetition"])] = value_of(m)
    return [
        ratio(value, by_rep[(Kind.KUBE.value, rep)])
        for (who, rep), value in sorted(by_rep.items())
        if who == Kind.ASCHED.value and (Kind.KUBE.value, rep) in by_rep
    ]


def _label(opts: PerfOptions) -> str:
    return f"perf-{opts.case.name}-{opts.workload.name}".replace("/", "_")


async def run_workload(opts: PerfOptions) -> dict[str, Any]:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    label = f"{_label(opts)}-{stamp}"
    await anyio.Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "test_case": opts.case.name,
        "workload": opts.workload.name,
        "config": opts.case.path.parent.name,
        "params": {**opts.workload.params, **opts.overrides},
        "overrides": dict(opts.overrides),
        "nodes": node_count(opts.ops),
        "feature_gates": merged_gates(opts.case, opts.workload),
        "threshold": opts.workload.threshold.value,
        "threshold_metric": opts.workload.threshold.metric,
        "backlog": opts.backlog,
        "qps": opts.limits.qps,
        "burst": opts.limits.burst,
        "machine": machine(),
        "git": await git_state(),
        "started": stamp,
        "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="asched-perf-") as tmp:
        for repetition in range(opts.runs):
            for who in rotate([k.value for k in opts.schedulers], repetition):
                work_dir = Path(tmp) / f"{who}-{repetition}"
                await anyio.Path(work_dir).mkdir()
                run = await one_run(opts, Kind(who), repetition, work_dir)
                document["runs"].append(run)
                document["summary"] = summarize(document["runs"])
                await _write(opts.out_dir / f"{label}.json", document)
    document["path"] = str(opts.out_dir / f"{label}.json")
    return document


async def _write(path: Path, document: Mapping[str, Any]) -> None:
    raw = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    await anyio.Path(path).write_bytes(raw)
