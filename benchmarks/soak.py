"""The soak: asched for an hour under mixed churn and a control-plane fault every five
minutes (issue "Control-plane faults"). A benchmark, not a CI test.

    python -m benchmarks.soak --minutes 60 --nodes 1000 --out DIR

What runs:
- a loopback cluster with `--nodes` kwok nodes (4 CPU each) and asched as a process
  (JSON logs at warning level, client qps/burst 500/1000);
- a steady population of `--pods` pods (500m CPU each) in one namespace; every second
  the `--replace` oldest are deleted and as many new ones created, so asched keeps
  binding while the cluster stays at the same fill;
- scheduler_perf's SchedulingWithMixedChurn objects beside them (benchmarks/churn.py: a
  node with no pod slots, a 9-CPU high-priority pod that fits nowhere and runs
  preemption, and a Service, recreated every second);
- a fault every `--fault-every` seconds (`schedule`): first asched SIGKILLed and started
  again, then in turn kube-apiserver SIGKILLed and restarted twice 10 s apart, etcd
  SIGSTOPped for 8 s, and watches forced to 410 Gone (etcd compacted while
  kube-apiserver is down, and restarted with its watch cache off; the next restart turns
  it back on).

What it reports (a JSON document, also logged):
- asched's RSS after the warm-up (the last sample before the second fault, `--fault-every`
  seconds after the restarted process came up) and at the end: the growth target is
  < 5 %; and every sample (10 s apart), for the curve;
- the event loop's lag p99 per 10 minutes (asched_event_loop_lag_seconds, scraped every
  30 s and summed over the processes that served each window);
- error-level log lines (target 0), with the events they name;
- pods lost (target 0): pods of the population still unbound once the churn stopped and
  asched had `SETTLE_S` seconds to catch up; double bindings (a pod seen on a second
  node); nodes whose bound pods request more CPU than they have;
- asched's exit code on the final SIGTERM (0 expected), and the faults with their times;
- the full garbage collections of the measured process (asched.gctune.Sweeper): how many,
  how long they held the loop, and the unreachable objects they found (the cyclic
  garbage a fault leaves frozen).

The first fault restarts asched so that the process measured from the warm-up to the end
lives through every later fault: a restart resets RSS and the lag histogram.
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import orjson
import structlog

from asched.api.quantity import parse_quantity_exact
from asched.client.protocol import REQUEST_ERRORS, ApiError
from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from benchmarks import procstat
from benchmarks.churn import Churn, ensure_priority_class
from benchmarks.observer import BindObserver
from benchmarks.promtext import Histogram, counter_by_label, parse_histogram, parse_histograms
from benchmarks.runner import export_asched
from benchmarks.schedulers import (
    SCHEDULER_NAMES,
    ClientLimits,
    Kind,
    SchedulerProcess,
    SchedulerSetup,
)
from benchmarks.workload import create_namespace, pod_manifest, pods_path

log = structlog.get_logger(__name__)

NAMESPACE = "soak"
LOOP_LAG = "asched_event_loop_lag_seconds"
GC_PAUSE = "asched_gc_pause_seconds"
GC_UNREACHABLE = "asched_gc_full_collection_unreachable_objects"
NODE_CPU = "4"
POD_CPU = "500m"
RSS_EVERY_S = 10.0
SCRAPE_EVERY_S = 30.0
LAG_WINDOW_S = 600.0
# After the churn stops: how long asched gets to bind what is still pending.
SETTLE_S = 120.0
# kube-apiserver's second kill comes this long after the first restart's readyz.
# How long a restarted kube-apiserver may take to answer /readyz. LocalCluster's default
# (60 s) is enough on a quiet machine; with 1000 nodes and other test suites on the two
# cores (load 14) a restart took longer, and the soak died with it at 11 minutes.
APISERVER_READY_S = 300.0
SECOND_KILL_AFTER_S = 10.0
ETCD_PAUSE_S = 8.0

ASCHED_RESTART = "asched-sigkill-restart"
APISERVER_TWICE = "apiserver-sigkill-restart-twice"
ETCD_PAUSE = "etcd-sigstop-8s"
WATCH_EXPIRY = "watch-410-compacted-no-watch-cache"
ROTATION = (APISERVER_TWICE, ETCD_PAUSE, WATCH_EXPIRY)


def schedule(duration: float, every: float) -> list[tuple[float, str]]:
    """(seconds from the start, fault) for a soak of *duration*: one every *every*
    seconds, none in the last *every*; asched's restart first, then ROTATION in turn."""
    times = [every * i for i in range(1, int(duration // every))]
    kinds = itertools.chain([ASCHED_RESTART], itertools.cycle(ROTATION))
    return list(zip(times, kinds, strict=False))


@dataclass(slots=True)
class Scrape:
    at: float
    pid: int
    lag: Histogram
    # Full collections so far (the generation-2 pauses) and the objects they found.
    full_gc: Histogram | None = None
    full_gc_unreachable: float = 0.0


def full_gc_summary(scrapes: Sequence[Scrape]) -> dict[str, Any]:
    """The full collections of the process of the last scrape, from its last scrape."""
    if not scrapes:
        return {}
    last = scrapes[-1]
    full = last.full_gc
    count = int(full.total) if full is not None else 0
    return {
        "full_gc_collections": count,
        "full_gc_seconds_mean": (full.sum / full.total) if full is not None and count else 0.0,
        "full_gc_unreachable_objects": int(last.full_gc_unreachable),
    }


def lag_p99_per_window(
    scrapes: Sequence[Scrape], start: float, end: float, window: float
) -> list[float]:
    """The lag p99 (ms) of each *window* from *start*: the observations between each two
    consecutive scrapes of one process, added up per window of the later scrape."""
    out: list[float] = []
    edges = [start + window * i for i in range(int((end - start) // window) + 1)]
    if edges[-1] < end:
        edges.append(end)
    for lo, hi in itertools.pairwise(edges):
        total: Histogram | None = None
        for before, after in itertools.pairwise(scrapes):
            if before.pid != after.pid or not lo <= after.at < hi:
                continue
            delta = after.lag.minus(before.lag)
            total = delta if total is None else total.plus(delta)
        out.append(float("nan") if total is None else total.quantile(0.99) * 1000)
    return out


@dataclass
class Soak:
    cluster: LocalCluster
    admin: ClusterClient
    work_dir: Path
    limits: ClientLimits
    population: int
    replace_per_s: int
    #: Run asched from this frozen copy (runner.export_asched), so edits made to the
    #: checkout during the hour do not reach the process the asched fault restarts.
    asched_src: Path | None = None
    started: float = 0.0
    proc: SchedulerProcess | None = None
    rss: list[tuple[float, int, int]] = field(default_factory=list)  # (s, pid, bytes)
    scrapes: list[Scrape] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # oldest first, still alive
    counter: itertools.count[int] = field(default_factory=itertools.count)
    request_failures: int = 0

    # -- asched ----------------------------------------------------------------------------

    async def start_asched(self) -> None:
        proc = SchedulerProcess(
            Kind.ASCHED,
            SchedulerSetup(self.limits, asched_src=self.asched_src),
            work_dir=self.work_dir,
            admin_kubeconfig=self.cluster.admin_kubeconfig,
            scheduler_kubeconfig=self.cluster.scheduler_kubeconfig,
            extra_args=["--log-format", "json"],
        )
        await proc.start()
        self.proc = proc
        with anyio.fail_after(300):
            await proc.wait_ready()

    async def kill_asched(self) -> None:
        proc = self.proc
        assert proc is not None
        await self.scrape()  # the dying process's last lag observations
        os.killpg(proc.pid, signal.SIGKILL)
        await proc.stop()

    async def scrape(self) -> None:
        proc = self.proc
        if proc is None or not proc.running():
            return
        try:
            with anyio.fail_after(20):
                text = await proc.metrics()
        except (OSError, TimeoutError) as exc:
            log.warning("soak_scrape_failed", error=str(exc))
            return
        lag = parse_histogram(text, LOOP_LAG)
        if lag is not None:
            full = parse_histograms(text, GC_PAUSE, by="generation").get("2")
            unreachable = counter_by_label(text, GC_UNREACHABLE).get("", 0.0)
            self.scrapes.append(Scrape(time.time(), proc.pid, lag, full, unreachable))

    # -- background loops ------------------------------------------------------------------

    async def sample_rss(self) -> None:
        while True:
            proc = self.proc
            if proc is not None and proc.running():
                try:
                    rss = procstat.rss_bytes(proc.pid)
                except (OSError, ValueError):
                    pass
                else:
                    self.rss.append((time.time() - self.started, proc.pid, rss))
            await anyio.sleep(RSS_EVERY_S)

    async def scrape_loop(self) -> None:
        while True:
            await self.scrape()
            await anyio.sleep(SCRAPE_EVERY_S)

    async def replace_pods(self) -> None:
        """Every second, the oldest `replace_per_s` pods go and as many new ones come.
        A write the fault cut is counted and skipped: the next second tries again."""
        while True:
            began = anyio.current_time()
            doomed = self.created[: self.replace_per_s]
            async with anyio.create_task_group() as tg:
                for name in doomed:
                    tg.start_soon(self._delete, name)
                for _ in range(self.replace_per_s):
                    tg.start_soon(self.create_pod)
            await anyio.sleep(max(0.0, 1.0 - (anyio.current_time() - began)))

    async def create_pod(self) -> None:
        name = f"s{next(self.counter):07d}"
        body = pod_manifest(name, cpu=POD_CPU, memory="64Mi")
        body["spec"]["schedulerName"] = SCHEDULER_NAMES[Kind.ASCHED]
        try:
            await self.admin.post(pods_path(NAMESPACE), body)
        except REQUEST_ERRORS:
            # The answer may be lost after the pod was made: track it anyway; deleting
            # a pod that does not exist is answered 404 and ignored.
            self.request_failures += 1
        self.created.append(name)

    async def _delete(self, name: str) -> None:
        try:
            await self.admin.delete(
                f"{pods_path(NAMESPACE)}/{name}", params={"gracePeriodSeconds": "0"}
            )
        except REQUEST_ERRORS as exc:
            if not (isinstance(exc, ApiError) and exc.not_found):
                self.request_failures += 1
                return  # still there: deleted on a later round
        if name in self.created:
            self.created.remove(name)

    async def mixed_churn(self) -> None:
        """benchmarks/churn.py's recreate loop, resumed after a fault cut it (the same
        Churn, so what it made before the cut is deleted after it)."""
        churn = Churn(self.admin, NAMESPACE, SCHEDULER_NAMES[Kind.ASCHED])
        while True:
            try:
                await churn.run()
            except REQUEST_ERRORS as exc:
                self.request_failures += 1
                log.info("soak_churn_interrupted", error=str(exc))
                await anyio.sleep(1.0)

    # -- faults ----------------------------------------------------------------------------

    async def inject(self, kind: str) -> None:
        began = time.time()
        record: dict[str, Any] = {"fault": kind, "at_s": began - self.started}
        if kind == ASCHED_RESTART:
            await self.kill_asched()
            await self.start_asched()
        elif kind == APISERVER_TWICE:
            await self.cluster.restart_apiserver(ready_within=APISERVER_READY_S)
            await anyio.sleep(SECOND_KILL_AFTER_S)
            await self.cluster.restart_apiserver(ready_within=APISERVER_READY_S)
        elif kind == ETCD_PAUSE:
            await self.cluster.pause_etcd(ETCD_PAUSE_S)
        elif kind == WATCH_EXPIRY:
            # Writes nobody watches move etcd's revision past what the informers saw;
            # compacting it while kube-apiserver is down, and restarting that without
            # a watch cache, makes every resumed watch fail with 410 Gone.
            await self._touch_configmap(20)
            await self.cluster.restart_apiserver(
                ready_within=APISERVER_READY_S,
                extra_args=["--watch-cache=false"],
                before_start=self.cluster.compact_etcd,
            )
        else:  # pragma: no cover - schedule() makes no other kind
            raise ValueError(kind)
        record["took_s"] = time.time() - began
        record["asched_running"] = self.proc is not None and self.proc.running()
        self.faults.append(record)
        log.info("soak_fault_done", **record)

    async def _touch_configmap(self, times: int) -> None:
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
        name = f"soak-rev-{next(self.counter)}"
        await self.admin.post(path, {"metadata": {"name": name}, "data": {"i": "0"}})
        for i in range(1, times):
            await self.admin.patch(f"{path}/{name}", {"data": {"i": str(i)}})


async def _with_retries(step: Callable[[], Awaitable[Any]], attempts: int = 30) -> Any:
    """A setup or check request, tried again while the control plane recovers."""
    for attempt in range(attempts):
        try:
            return await step()
        except REQUEST_ERRORS:
            if attempt == attempts - 1:
                raise
            await anyio.sleep(2.0)
    raise AssertionError("unreachable")


async def _final_checks(admin: ClusterClient, nodes: Sequence[str]) -> dict[str, Any]:
    """Pods lost (unbound), and nodes whose bound pods ask for more CPU than they have."""
    pods = (await admin.get(pods_path(NAMESPACE)))["items"]
    population = [p for p in pods if p["metadata"]["name"].startswith("s")]
    unbound = sorted(
        p["metadata"]["name"]
        for p in population
        if not p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")
    )
    everything = (await admin.get("/api/v1/pods"))["items"]
    used: dict[str, Fraction] = defaultdict(Fraction)
    for p in everything:
        node = p["spec"].get("nodeName")
        if node:
            for c in p["spec"]["containers"]:
                cpu = ((c.get("resources") or {}).get("requests") or {}).get("cpu", "0")
                used[node] += parse_quantity_exact(cpu)
    limit = parse_quantity_exact(NODE_CPU)
    over = {n: str(u) for n, u in used.items() if n in nodes and u > limit}
    return {
        "population_pods": len(population),
        "pods_lost": len(unbound),
        "pods_lost_names": unbound[:50],
        "overcommitted_nodes": over,
    }


def _error_lines(log_path: Path) -> list[dict[str, Any]]:
    out = []
    for line in log_path.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if record.get("level") in ("error", "critical"):
            out.append(record)
    return out


def rss_summary(samples: Sequence[tuple[float, int, int]], warm_before: float) -> dict[str, Any]:
    """RSS of the process that lived from the warm-up to the end: *samples* are (s, pid,
    bytes); the warm figure is the last one that process gave before *warm_before* (the
    second fault). The first sample at or after it was taken once the fault had begun:
    with kube-apiserver killed, asched's connections are gone and RSS dips for a moment
    (92.6 MiB at 592 s, 89.9 at 602 s, 94.2 at 612 s in the fourth soak)."""
    if not samples:
        return {}
    last_pid = samples[-1][1]
    mine = [(t, rss) for t, pid, rss in samples if pid == last_pid]
    before = [(t, rss) for t, rss in mine if t < warm_before]
    warm = before[-1] if before else mine[0]
    end = mine[-1]
    return {
        "rss_warm_mib": warm[1] / 2**20,
        "rss_warm_at_s": warm[0],
        "rss_end_mib": end[1] / 2**20,
        "rss_end_at_s": end[0],
        "rss_growth_pct": 100.0 * (end[1] - warm[1]) / warm[1],
        "rss_max_mib": max(r for _, r in mine) / 2**20,
        "rss_samples": [(round(t), round(r / 2**20, 1)) for t, r in mine],
    }


async def run_soak(args: argparse.Namespace) -> dict[str, Any]:
    duration = args.minutes * 60.0
    plan = schedule(duration, args.fault_every)
    work_dir: Path = args.work_dir
    document: dict[str, Any] = {
        "asched_ref": args.asched_ref,
        "minutes": args.minutes,
        "nodes": args.nodes,
        "population": args.pods,
        "replace_per_s": args.replace,
        "fault_every_s": args.fault_every,
        "plan": plan,
        "loadavg_start": list(os.getloadavg()),
    }
    async with LocalCluster(unthrottled=True) as cluster:
        specs = [NodeSpec(f"soak-{i:05d}", cpu=NODE_CPU) for i in range(args.nodes)]
        nodes = await cluster.create_nodes(specs, concurrency=64)
        with anyio.fail_after(600):
            await cluster.wait_nodes_ready(nodes)
        async with cluster.admin_client(connections=64, timeout=30) as admin:
            await create_namespace(admin, NAMESPACE)
            await ensure_priority_class(admin)
            src = None
            if args.asched_ref:
                src = await export_asched(args.asched_ref, work_dir / "asched-src")
            soak = Soak(
                cluster, admin, work_dir, ClientLimits(500, 1000), args.pods, args.replace, src
            )
            try:
                observer = BindObserver(admin, NAMESPACE, expected=sys.maxsize)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(observer.run)
                    await observer.wait_synced()
                    # Half the population exists before asched starts (the setup).
                    for _ in range(args.pods // 2):
                        await soak.create_pod()
                    soak.started = time.time()
                    await soak.start_asched()
                    for _ in range(args.pods - args.pods // 2):
                        await soak.create_pod()
                    tg.start_soon(soak.sample_rss)
                    tg.start_soon(soak.scrape_loop)
                    tg.start_soon(soak.replace_pods)
                    tg.start_soon(soak.mixed_churn)
                    for at, kind in plan:
                        await anyio.sleep(max(0.0, soak.started + at - time.time()))
                        await soak.inject(kind)
                    await anyio.sleep(max(0.0, soak.started + duration - time.time()))
                    ended = time.time()
                    await soak.scrape()
                    warm_before = plan[1][0] if len(plan) > 1 else 0.0
                    document.update(rss_summary(soak.rss, warm_before))
                    tg.cancel_scope.cancel()
                # The churn stopped; asched gets SETTLE_S to bind what is pending.
                with anyio.move_on_after(SETTLE_S):
                    while True:
                        checks = await _with_retries(lambda: _final_checks(admin, nodes))
                        if not checks["pods_lost"]:
                            break
                        await anyio.sleep(5.0)
                checks = await _with_retries(lambda: _final_checks(admin, nodes))
                document.update(checks)
                document["double_bindings"] = observer.rebound
                assert soak.proc is not None
                document["exit_code_on_sigterm"] = await soak.proc.stop()
                errors = await anyio.to_thread.run_sync(_error_lines, soak.proc.log_path)
                document["error_log_lines"] = len(errors)
                document["error_log_events"] = sorted({str(r.get("event")) for r in errors})
                document["loop_lag_p99_ms_per_10min"] = lag_p99_per_window(
                    soak.scrapes, soak.started, ended, LAG_WINDOW_S
                )
                document["faults"] = soak.faults
                document.update(full_gc_summary(soak.scrapes))
                document["harness_request_failures"] = soak.request_failures
                document["pods_created"] = next(soak.counter)
            finally:
                # However the soak ends (a fault that failed, Ctrl-C), asched is not left
                # running after its cluster is gone; stop() is a no-op once it stopped.
                if soak.proc is not None:
                    with anyio.CancelScope(shield=True):
                        await soak.proc.stop()
    document["loadavg_end"] = list(os.getloadavg())
    path = work_dir.with_suffix(".json")
    await anyio.Path(path).write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    document["path"] = str(path)
    return document


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=4000, help="the steady population")
    parser.add_argument("--replace", type=int, default=10, help="pods replaced per second")
    parser.add_argument("--fault-every", type=float, default=300.0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--asched-ref", default=None, help="run asched from this commit (or 'worktree')"
    )
    args = parser.parse_args(argv)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    # Absolute: asched runs in a directory of its own and is given paths under this one.
    args.work_dir = args.out.resolve() / f"soak-{args.nodes}n-{args.pods}p-{stamp}"
    args.work_dir.mkdir(parents=True)
    document = anyio.run(run_soak, args)
    summary = {k: v for k, v in document.items() if k not in ("rss_samples", "plan")}
    print(orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
