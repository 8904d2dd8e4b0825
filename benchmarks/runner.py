"""Runs one scenario end to end: one cluster, its nodes, then each scheduler in turn.

For every repetition, and for each scheduler in an order that rotates between repetitions
(so neither always runs on the fresher cluster), one run is:
1. a fresh namespace; its PodGroups and all its pods, created with that scheduler's name
   while nobody serves it (so creation speed never limits scheduling);
2. the benchmark's own watch on the namespace, synced;
3. the scheduler started; the run ends when the scenario's pods are bound, when nothing was
   bound for the scenario's settle time, at the timeout, or if the scheduler dies;
4. the scheduler's CPU, peak RSS and /metrics read, the scheduler stopped;
5. the namespace's pods force-deleted and waited for, before the next run.
Every number of a run is computed here from what the watch saw and what /proc and
/metrics said; the whole result is written as JSON under benchmarks/results/.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import orjson
import structlog

from asched.client.protocol import REQUEST_ERRORS
from asched.localcluster import ClusterClient, LocalCluster
from benchmarks import ceiling, procstat
from benchmarks.churn import Churn, ensure_priority_class
from benchmarks.inspector_client import StreamStats, read_events
from benchmarks.observer import BindObserver
from benchmarks.profiling import PySpy
from benchmarks.promtext import (
    counter_by_label,
    counter_delta,
    parse_histogram,
    parse_histograms,
)
from benchmarks.recovery import ApiServerRestart
from benchmarks.recovery import summary as recovery_summary
from benchmarks.scenarios import Scenario
from benchmarks.schedulers import (
    REPO_ROOT,
    SCHEDULER_NAMES,
    Kind,
    SchedulerProcess,
    SchedulerSetup,
)
from benchmarks.stats import (
    mean_throughput,
    median_or_nan,
    per_second_counts,
    percentile,
    ratio,
)
from benchmarks.workload import create_namespace, create_podgroups, create_pods, group_of
from benchmarks.workload import delete_namespace_contents as clean_namespace

log = structlog.get_logger(__name__)

LOOP_LAG = "asched_event_loop_lag_seconds"
# The same lag net of the time the loop's thread waited for a CPU (asched/looplag.py).
LOOP_LAG_NET = "asched_event_loop_lag_net_seconds"
# How long each garbage collection held the loop's thread (asched/gctune.py GcPauses).
GC_PAUSE = "asched_gc_pause_seconds"
MALLOC_TRIM = "asched_malloc_trim_seconds_total"
ATTEMPTS = "scheduler_schedule_attempts_total"
COMPONENTS = ("kube-apiserver", "etcd", "kwok")
SAMPLE_INTERVAL = 0.25
QUIESCE_LIMIT = 90.0
IDLE_SAMPLE = 5.0


@dataclass(frozen=True)
class BenchOptions:
    scenario: Scenario
    setup: SchedulerSetup
    runs: int
    schedulers: tuple[str, ...]  # Kind values and/or ceiling.NAME
    timeout: float
    out_dir: Path
    cooldown: float = 3.0
    bind_inflight: int = 64
    #: A git ref to export and run asched from; None runs the checkout as it is.
    asched_ref: str | None = None
    #: py-spy executable: sample asched during each of its runs (see benchmarks.profiling).
    py_spy: Path | None = None
    #: Inspector event streams held open during asched's runs (benchmarks.inspector_client).
    inspector_clients: int = 0


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(mem_kib / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


async def git_state() -> dict[str, Any]:
    """The checkout's commit and whether asched/ differs from it (results name both)."""
    head = await anyio.run_process(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, check=False)
    dirty = await anyio.run_process(
        ["git", "status", "--porcelain", "--", "asched"], cwd=REPO_ROOT, check=False
    )
    return {"commit": head.stdout.decode().strip(), "asched_dirty": bool(dirty.stdout.strip())}


WORKTREE = "worktree"


#: The out-of-tree policies package's source (examples/policies), exported with asched.
POLICIES_SRC = Path("examples/policies/src/asched_policies")


async def export_asched(ref: str, into: Path) -> Path:
    """A frozen copy of asched/ under *into*, so edits made to the checkout while a
    benchmark runs do not change what it measures: `git archive <ref> asched`, or for
    ref "worktree" a copy of the checkout's asched/ as it is now. The copy is byte-compiled,
    as `pip install` (and so the Dockerfile) leaves an installed asched: otherwise the
    first run would spend most of a second of its measured CPU compiling asched's sources."""
    await anyio.Path(into).mkdir(parents=True, exist_ok=True)
    await _export(ref, into)
    await anyio.run_process([sys.executable, "-m", "compileall", "-q", str(into / "asched")])
    return into


async def _export(ref: str, into: Path) -> None:
    if ref == WORKTREE:
        for src, dst in (("asched", "asched"), (POLICIES_SRC, POLICIES_SRC.name)):
            await anyio.to_thread.run_sync(
                functools.partial(
                    shutil.copytree,
                    REPO_ROOT / src,
                    into / dst,
                    ignore=shutil.ignore_patterns("__pycache__"),
                )
            )
        return
    archive = await anyio.run_process(
        ["git", "archive", ref, "asched", POLICIES_SRC.as_posix()], cwd=REPO_ROOT
    )
    await anyio.run_process(["tar", "-x", "-C", str(into)], input=archive.stdout)
    # The policies of the same commit beside its asched (the asched-plugins scheduler
    # imports them; the installed ones may use APIs that commit lacks).
    await anyio.to_thread.run_sync(
        lambda: shutil.move(into / POLICIES_SRC, into / POLICIES_SRC.name)
    )


def rotate(items: Sequence[str], by: int) -> list[str]:
    """*items* rotated left by *by*: repetition r starts with the r-th scheduler."""
    if not items:
        return []
    k = by % len(items)
    return [*items[k:], *items[:k]]


class CpuTrace:
    """(wall time, CPU seconds) samples of one process, to cut the CPU of a time window."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[float, float]] = []

    def sample(self) -> None:
        cpu = procstat.cpu_seconds_or_nan(self.pid)
        if not math.isnan(cpu):
            self.samples.append((time.time(), cpu))

    async def run(self) -> None:
        while True:
            self.sample()
            await anyio.sleep(SAMPLE_INTERVAL)

    def at(self, when: float) -> float:
        """CPU seconds at the sample nearest *when* (NaN without samples)."""
        if not self.samples:
            return math.nan
        return min(self.samples, key=lambda s: abs(s[0] - when))[1]


def _component_cpu(pids: dict[str, int]) -> dict[str, float]:
    return {name: procstat.cpu_seconds_or_nan(pids[name]) for name in COMPONENTS if name in pids}


async def _control_plane_rate(pids: dict[str, int], seconds: float) -> float:
    """CPU seconds per second that kube-apiserver, etcd and kwok use together."""
    before = sum(_component_cpu(pids).values())
    await anyio.sleep(seconds)
    return (sum(_component_cpu(pids).values()) - before) / seconds


async def quiesce(pids: dict[str, int], idle_rate: float, limit: float = QUIESCE_LIMIT) -> float:
    """Wait until the control plane is back to its idle CPU rate; return seconds waited.

    kwok works through a backlog after each run (pod status patches, deletes), and
    kube-apiserver and etcd with it; a run that starts meanwhile pays for the previous
    one. "Idle" is the rate measured once the nodes were Ready (heartbeats and leases of
    thousands of nodes are never zero), with some slack; *limit* bounds the wait.
    """
    began = time.monotonic()
    while time.monotonic() - began < limit:
        if await _control_plane_rate(pids, 1.0) <= idle_rate * 1.25 + 0.05:
            break
    return time.monotonic() - began


def _gang_timing(obs: BindObserver, size: int, window: float) -> dict[str, Any]:
    """Per gang: first-to-last member bind spread; and wall time per completed gang."""
    members: dict[str, list[float]] = {}
    for name, binding in obs.bound.items():
        group = group_of(obs.labels.get(name, {}))
        if group is not None:
            members.setdefault(group, []).append(binding.at)
    spreads = [(max(ts) - min(ts)) * 1000 for ts in members.values() if len(ts) >= size]
    complete = len(spreads)
    return {
        "ms_per_gang": window * 1000 / complete if complete else math.nan,
        "gang_bind_spread_p50_ms": percentile(spreads, 50),
        "gang_bind_spread_p99_ms": percentile(spreads, 99),
    }


async def one_run(
    opts: BenchOptions,
    *,
    cluster: LocalCluster,
    admin: ClusterClient,
    who: str,
    repetition: int,
    work_dir: Path,
    idle_rate: float,
) -> dict[str, Any]:
    scenario = opts.scenario
    namespace = f"bench-{scenario.name}-{who}-{repetition}".lower()
    scheduler_name = ceiling.SCHEDULER_NAME if who == ceiling.NAME else SCHEDULER_NAMES[Kind(who)]
    await create_namespace(admin, namespace)
    if scenario.podgroups:
        await create_podgroups(admin, namespace, scenario.podgroups)
    created = await create_pods(admin, namespace, scenario.pods, scheduler_name)
    await anyio.sleep(opts.cooldown)
    waited = await quiesce(cluster.pids, idle_rate)
    result: dict[str, Any] = {
        "scheduler": who,
        "repetition": repetition,
        "pods": len(scenario.pods),
        "loadavg_before": list(os.getloadavg()),
        "quiesce_s": waited,
    }
    obs = BindObserver(admin, namespace, scenario.bound_target)
    churn = Churn(admin, namespace, scheduler_name) if scenario.churn else None
    proc: SchedulerProcess | None = None
    spy: PySpy | None = None
    if who != ceiling.NAME:
        proc = SchedulerProcess(
            Kind(who),
            opts.setup,
            work_dir=work_dir,
            admin_kubeconfig=cluster.admin_kubeconfig,
            scheduler_kubeconfig=cluster.scheduler_kubeconfig,
        )
        if opts.py_spy is not None and proc.kind.is_asched:
            spy = PySpy(opts.py_spy, work_dir / f"asched-{repetition}.folded")
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(obs.run)
            await obs.wait_synced()
            node_names = [n.name for n in scenario.nodes]

            async def bare_bind() -> None:
                await ceiling.bind_all(
                    cluster.admin_kubeconfig,
                    namespace,
                    created,
                    node_names,
                    inflight=opts.bind_inflight,
                )

            result.update(
                await _measure(
                    opts,
                    cluster=cluster,
                    admin=admin,
                    obs=obs,
                    proc=proc,
                    spy=spy,
                    bare_bind=bare_bind,
                    churn=churn,
                )
            )
            tg.cancel_scope.cancel()
    finally:
        # Also on errors and Ctrl-C: never leave a scheduler or py-spy running.
        with anyio.CancelScope(shield=True):
            if spy is not None:
                await spy.stop()
            if proc is not None:
                result["exit_code"] = await proc.stop()
    result.update(_bind_summary(obs, created, result["began"], result["ended"], result["outcome"]))
    if scenario.verify is not None:
        result["checks"] = scenario.verify(obs.bound, obs.labels)
    if scenario.gang or scenario.native_gang:
        size = max(1, len(scenario.pods) // max(1, len(scenario.podgroups)))
        result.update(_gang_timing(obs, size, result["bind_window_s"]))
    result["loadavg_after"] = list(os.getloadavg())
    await clean_namespace(admin, namespace, list(created))
    log.info("run_done", **{k: v for k, v in result.items() if not isinstance(v, dict)})
    return result


async def _measure(
    opts: BenchOptions,
    *,
    cluster: LocalCluster,
    admin: ClusterClient,
    obs: BindObserver,
    proc: SchedulerProcess | None,
    spy: PySpy | None,
    bare_bind: Callable[[], Coroutine[Any, Any, None]],
    churn: Churn | None = None,
) -> dict[str, Any]:
    """From the scheduler's start (or, without *proc*, from *bare_bind*'s start: the
    ceiling run) to the end of the run: what the run's numbers need. Churn, if any,
    starts once the scheduler is ready and stops when the run ends."""
    result: dict[str, Any] = {}
    requests_before = await _apiserver_requests(admin)
    components_before = _component_cpu(cluster.pids)
    trace: CpuTrace | None = None
    baseline = ""
    async with anyio.create_task_group() as tg:
        began = time.time()
        if proc is None:
            tg.start_soon(bare_bind)
        else:
            await proc.start()
            trace = CpuTrace(proc.pid)
            tg.start_soon(trace.run)
            if spy is not None:
                await spy.attach(proc.pid)
            # Readiness waits for the informers' initial lists: 120 s, plus 1 s per 100
            # pending pods (10 gangs of 5000 pods: neither 120 s at load 8 nor 220 s
            # sufficed), or the run's timeout if longer. A scheduler never ready by then is
            # a result ("not-ready", nothing bound), not an error that loses the others.
            with anyio.move_on_after(
                max(120 + len(opts.scenario.pods) / 100, opts.timeout)
            ) as waiting:
                result["ready_after_s"] = await proc.wait_ready() - began
            if waiting.cancelled_caught:
                result["outcome"] = "not-ready"
            else:
                baseline = await proc.metrics()
        restart: ApiServerRestart | None = None
        fraction = opts.scenario.restart_apiserver_at
        if fraction is not None and proc is not None and "outcome" not in result:
            restart = ApiServerRestart(
                cluster,
                obs,
                max(1, int(opts.scenario.bound_target * fraction)),
                serving=lambda: _serving(admin),
            )
            tg.start_soon(restart.run)
        streams = StreamStats()
        if proc is not None and proc.kind.is_asched:
            for _ in range(opts.inspector_clients):
                tg.start_soon(read_events, proc.url, streams)
        if churn is not None:
            tg.start_soon(churn.run)
        obs.last_change = began
        if "outcome" not in result:
            result["outcome"] = await _wait_for_end(opts, obs, began, proc)
            if restart is not None:
                # The recovery numbers need the restarted server's readyz.
                with anyio.move_on_after(max(1.0, began + opts.timeout - time.time())):
                    await restart.done.wait()
        ended = time.time()
        # The control plane's share is cut here, before the scheduler's shutdown, so both
        # schedulers are charged for the same span: scheduler start to the end of the run.
        components_after = _component_cpu(cluster.pids)
        for name, before in components_before.items():
            result[f"{name}_cpu_seconds"] = components_after[name] - before
        # Every client's requests (kwok's and this watch's too): the same for both
        # schedulers but for what the scheduler sends, so differences point at it.
        if restart is None:
            result["apiserver_requests"] = counter_delta(
                await _apiserver_requests(admin), requests_before
            )
        else:
            # The restarted server counts its requests and CPU from zero: no delta.
            result["kube-apiserver_cpu_seconds"] = math.nan
            result.update(recovery_summary(restart, obs.bound))
        if proc is not None and trace is not None and proc.running():
            trace.sample()
            use = procstat.usage(proc.pid)
            result["cpu_seconds"] = use.cpu_seconds
            result["peak_rss_mib"] = use.peak_rss_bytes / 2**20
            if baseline:
                result.update(_metrics_summary(baseline, await proc.metrics()))
            if obs.bound:
                times = [b.at for b in obs.bound.values()]
                result["cpu_seconds_bind_window"] = trace.at(max(times)) - trace.at(min(times))
        tg.cancel_scope.cancel()
    result["began"], result["ended"] = began, ended
    if opts.inspector_clients and proc is not None and proc.kind.is_asched:
        result["inspector_clients"] = opts.inspector_clients
        result["inspector_events"] = streams.events
        result["inspector_bytes"] = streams.bytes
    if churn is not None:
        result["churn_rounds"] = churn.rounds
    return result


async def _wait_for_end(
    opts: BenchOptions, obs: BindObserver, began: float, proc: SchedulerProcess | None
) -> str:
    """Poll until the run is over; return why: complete, settled, timeout, scheduler-exited."""
    scenario = opts.scenario
    deadline = began + opts.timeout
    while len(obs.bound) < scenario.bound_target:
        now = time.time()
        if scenario.settle_seconds is not None and now - obs.last_change >= scenario.settle_seconds:
            return "settled"
        if now > deadline:
            return "timeout"
        if proc is not None and not proc.running():
            return "scheduler-exited"
        await anyio.sleep(0.1)
    return "complete"


async def _serving(admin: ClusterClient) -> bool:
    """Whether the API server serves a read from storage (the faults scenario's restart)."""
    try:
        status, _ = await admin.request_raw("GET", "/api/v1/namespaces/default")
    except REQUEST_ERRORS:
        return False
    return status == 200


async def _apiserver_requests(admin: ClusterClient) -> dict[str, float]:
    status, raw = await admin.request_raw("GET", "/metrics")
    if status != 200:
        return {}
    return counter_by_label(
        raw.decode(), "apiserver_request_total", "verb", "resource", "subresource"
    )


def _metrics_summary(baseline: str, final: str) -> dict[str, Any]:
    summary: dict[str, Any] = {"attempts": counter_by_label(final, ATTEMPTS, "result")}
    for metric, prefix in ((LOOP_LAG, "loop_lag"), (LOOP_LAG_NET, "loop_lag_net")):
        end = parse_histogram(final, metric)
        start = parse_histogram(baseline, metric) if baseline else None
        if end is None:
            continue
        lag = end.minus(start) if start is not None else end
        summary[f"{prefix}_p99_ms"] = lag.quantile(0.99) * 1000
        summary[f"{prefix}_p50_ms"] = lag.quantile(0.50) * 1000
        summary[f"{prefix}_mean_ms"] = lag.sum / lag.total * 1000 if lag.total else math.nan
    trims = counter_by_label(final, MALLOC_TRIM)
    if trims:
        # From start-up on (trims are cheap and few; the baseline is taken at /readyz).
        summary["malloc_trim_ms"] = round(trims.get("", 0.0) * 1000, 1)
    pauses = parse_histogram(final, GC_PAUSE)
    if pauses is not None:
        before = parse_histogram(baseline, GC_PAUSE) if baseline else None
        if before is not None:
            pauses = pauses.minus(before)
        summary["gc_pause_max_ms"] = pauses.max_bound() * 1000
        summary["gc_pause_total_ms"] = pauses.sum * 1000
        # Per generation: collections, their time and the longest, e.g. "0": [n, ms, ms].
        earlier = parse_histograms(baseline, GC_PAUSE, "generation") if baseline else {}
        generations = {}
        for gen, end in sorted(parse_histograms(final, GC_PAUSE, "generation").items()):
            h = end.minus(earlier[gen]) if gen in earlier else end
            generations[gen] = [h.total, round(h.sum * 1000, 1), h.max_bound() * 1000]
        summary["gc_by_generation"] = generations
    return summary


def _bind_summary(
    obs: BindObserver, created: dict[str, Any], began: float, ended: float, outcome: str
) -> dict[str, Any]:
    times = sorted(b.at for b in obs.bound.values())
    latencies = [b.at - created[n].at for n, b in obs.bound.items() if n in created]
    per_second = per_second_counts(times)
    window = (times[-1] - times[0]) if times else math.nan
    return {
        "outcome": outcome,
        "bound": len(times),
        "run_s": ended - began,
        "first_bind_after_s": times[0] - began if times else math.nan,
        "last_bind_after_s": times[-1] - began if times else math.nan,
        "bind_window_s": window,
        "pods_per_s": mean_throughput(times),
        "pods_per_s_from_start": len(times) / (times[-1] - began) if times else math.nan,
        "per_second_p50": percentile(per_second, 50),
        "per_second_p90": percentile(per_second, 90),
        "latency_p50_s": percentile(latencies, 50),
        "latency_p99_s": percentile(latencies, 99),
    }


SUMMARY_KEYS = (
    "pods_per_s",
    "per_second_p50",
    "pods_per_s_from_start",
    "latency_p50_s",
    "latency_p99_s",
    "cpu_seconds",
    "cpu_seconds_bind_window",
    "peak_rss_mib",
    "loop_lag_p99_ms",
    "loop_lag_net_p99_ms",
    "gc_pause_max_ms",
    "gc_pause_total_ms",
    "ready_after_s",
    "first_bind_after_s",
    "kube-apiserver_cpu_seconds",
    "etcd_cpu_seconds",
    "kwok_cpu_seconds",
    "ms_per_gang",
    "gang_bind_spread_p99_ms",
    # The faults scenario (recovery.py).
    "recovery_s",
    "first_bind_after_ready_s",
    "binds_per_s_10s_after_ready",
    "first_bind_after_kill_s",
    "last_bind_after_kill_s",
    "serving_after_kill_s",
    "first_bind_after_serving_s",
    "last_bind_after_serving_s",
    "apiserver_down_s",
)


def paired_ratios(runs: list[dict[str, Any]], top: str, bottom: str, key: str) -> list[float]:
    """`top`'s `key` over `bottom`'s, one ratio per repetition both completed: the two
    ran back to back on the same cluster and machine load."""
    by: dict[tuple[str, int], float] = {
        (r["scheduler"], r["repetition"]): float(r.get(key, math.nan))
        for r in runs
        if r["outcome"] == "complete"
    }
    return [
        ratio(by[(top, rep)], by[(bottom, rep)])
        for (who, rep) in sorted(by)
        if who == top and (bottom, rep) in by
    ]


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of each number per scheduler, and asched's ratios to kube-scheduler."""
    per: dict[str, dict[str, Any]] = {}
    for who in sorted({r["scheduler"] for r in runs}):
        mine = [r for r in runs if r["scheduler"] == who]
        medians: dict[str, Any] = {
            key: median_or_nan([float(r.get(key, math.nan)) for r in mine]) for key in SUMMARY_KEYS
        }
        medians["runs"] = len(mine)
        medians["complete_runs"] = sum(1 for r in mine if r["outcome"] == "complete")
        medians["violations"] = sum(int((r.get("checks") or {}).get("violations", 0)) for r in mine)
        medians["loadavg_1m"] = median_or_nan([r["loadavg_before"][0] for r in mine])
        per[who] = medians
    ratios: dict[str, float] = {}
    a, k = per.get(Kind.ASCHED.value), per.get(Kind.KUBE.value)
    if a is not None and k is not None:
        for key in (
            "pods_per_s",
            "per_second_p50",
            "pods_per_s_from_start",
            "cpu_seconds",
            "peak_rss_mib",
            "latency_p50_s",
            "latency_p99_s",
        ):
            ratios[f"asched/kube {key}"] = ratio(a[key], k[key])
        for key in (
            "recovery_s",
            "first_bind_after_kill_s",
            "last_bind_after_kill_s",
            "last_bind_after_serving_s",
        ):
            if not math.isnan(a[key]) and not math.isnan(k[key]):
                paired = paired_ratios(runs, Kind.ASCHED.value, Kind.KUBE.value, key)
                ratios[f"asched/kube {key} paired median"] = median_or_nan(paired)
    p = per.get(Kind.ASCHED_PLUGINS.value)
    if p is not None:
        for base in (Kind.KUBE.value, Kind.ASCHED.value):
            if base in per:
                ratios[f"asched-plugins/{base} pods_per_s"] = ratio(
                    p["pods_per_s"], per[base]["pods_per_s"]
                )
                ratios[f"asched-plugins/{base} cpu_seconds"] = ratio(
                    p["cpu_seconds"], per[base]["cpu_seconds"]
                )
                paired = paired_ratios(runs, Kind.ASCHED_PLUGINS.value, base, "pods_per_s")
                ratios[f"asched-plugins/{base} pods_per_s paired median"] = median_or_nan(paired)
    c = per.get(ceiling.NAME)
    if c is not None:
        for who in (Kind.ASCHED.value, Kind.KUBE.value):
            if who in per:
                ratios[f"{who}/ceiling pods_per_s"] = ratio(per[who]["pods_per_s"], c["pods_per_s"])
    return {"per_scheduler": per, "ratios": ratios}


async def run_benchmark(opts: BenchOptions) -> dict[str, Any]:
    scenario = opts.scenario
    stamp = time.strftime("%Y%m%dT%H%M%S")
    await anyio.Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
    label = (
        f"{scenario.name}-{len(scenario.nodes)}n-{len(scenario.pods)}p-"
        f"{opts.setup.limits.label}-{stamp}"
    )
    if opts.setup.spread_defaulting != "System":
        label = f"spread{opts.setup.spread_defaulting}-{label}"
    work_dir = opts.out_dir / label
    await anyio.Path(work_dir).mkdir()
    document: dict[str, Any] = {
        "scenario": scenario.name,
        "describe": scenario.describe
        + (
            f"; PodTopologySpread defaultingType {opts.setup.spread_defaulting}"
            if opts.setup.spread_defaulting != "System"
            else ""
        ),
        "nodes": len(scenario.nodes),
        "pods": len(scenario.pods),
        "podgroups": len(scenario.podgroups),
        "qps": opts.setup.limits.qps,
        "burst": opts.setup.limits.burst,
        "percentage_of_nodes_to_score": opts.setup.percentage_of_nodes_to_score,
        "spread_defaulting": opts.setup.spread_defaulting,
        "machine": machine(),
        "started": stamp,
        "loadavg_start": list(os.getloadavg()),
        "git": await git_state(),
        "asched_ref": opts.asched_ref,
        "runs": [],
    }
    async with AsyncExitStack() as stack:
        if opts.asched_ref is not None:
            # Outside the checkout, so no tool that walks the repository finds a second
            # `asched` package in it.
            src = Path(await anyio.to_thread.run_sync(tempfile.mkdtemp, "", "asched-bench-"))
            stack.push_async_callback(
                anyio.to_thread.run_sync, lambda: shutil.rmtree(src, ignore_errors=True)
            )
            await export_asched(opts.asched_ref, src)
            opts = dataclasses.replace(opts, setup=dataclasses.replace(opts.setup, asched_src=src))
        await _run_all(opts, document, work_dir)
    document["summary"] = summarize(document["runs"])
    document["loadavg_end"] = list(os.getloadavg())
    path = work_dir.with_suffix(".json")
    await _write(path, document)
    document["path"] = str(path)
    return document


async def _run_all(opts: BenchOptions, document: dict[str, Any], work_dir: Path) -> None:
    scenario = opts.scenario
    async with LocalCluster(unthrottled=True) as cluster:
        began = time.monotonic()
        names = await cluster.create_nodes(scenario.nodes, concurrency=64)
        with anyio.fail_after(600):
            await cluster.wait_nodes_ready(names)
        document["nodes_ready_s"] = time.monotonic() - began
        log.info("nodes_ready", count=len(names), seconds=round(document["nodes_ready_s"], 1))
        await anyio.sleep(opts.cooldown)
        idle_rate = await _control_plane_rate(cluster.pids, IDLE_SAMPLE)
        document["control_plane_idle_cpu_rate"] = idle_rate
        log.info("control_plane_idle", cpu_per_second=round(idle_rate, 2))
        async with cluster.admin_client(connections=64, timeout=600) as admin:
            if scenario.churn:
                await ensure_priority_class(admin)
            for repetition in range(opts.runs):
                for who in rotate(opts.schedulers, repetition):
                    run = await one_run(
                        opts,
                        cluster=cluster,
                        admin=admin,
                        who=who,
                        repetition=repetition,
                        work_dir=work_dir,
                        idle_rate=idle_rate,
                    )
                    document["runs"].append(run)
                    await _write(work_dir.with_suffix(".json"), document)


async def _write(path: Path, document: dict[str, Any]) -> None:
    """Rewritten after every run, so an interrupted benchmark keeps what it measured."""
    raw = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    await anyio.Path(path).write_bytes(raw)
