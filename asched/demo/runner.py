"""`asched demo`: a control plane, mixed nodes, two asched schedulers and a workload.

Order: start LocalCluster -> create the nodes and wait until kwok marks them Ready ->
start the schedulers in this event loop and wait until their caches have synced ->
submit the workload -> print each placement as it happens -> print the table -> stop
everything (or, with --keep, wait for Ctrl-C first).

Two schedulers rather than one with two profiles: every profile of one scheduler must
share a QueueSort plugin, gangs need Coscheduling's, and the seed configuration (used
verbatim) names PrioritySort. See data/gang-config.yaml.

Teardown guarantee: SIGINT/SIGTERM at any point cancels the work, the schedulers stop
first (they are inside the cluster's scope), then LocalCluster stops its processes and
removes its work directory, shielded from cancellation. Signals that arrive during the
teardown are acknowledged, not obeyed, so a second Ctrl-C cannot leave processes behind.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import structlog

from asched.demo.instances import InProcessScheduler
from asched.demo.progress import Progress
from asched.demo.report import build_rows, render_rows
from asched.demo.topology import RACK, ZONE, demo_nodes
from asched.demo.workload import Workload
from asched.explain.table import format_table
from asched.localcluster import (
    ApiError,
    ClusterClient,
    ClusterError,
    ClusterStartError,
    LocalCluster,
    NodeSpec,
)

log = structlog.get_logger(__name__)

Say = Callable[[str], None]
NODES_READY_TIMEOUT = 60.0
EXIT_INTERRUPTED = 130


@dataclass(slots=True)
class DemoOptions:
    nodes: int = 8
    keep: bool = False
    # How long to wait for the workload to settle before printing the table anyway.
    settle_timeout: float = 90.0
    bin_dir: Path | None = None
    # Shown with --keep: a config file to pass to `asched explain` for gang-scheduler pods.
    explain_config: str = ""


@dataclass(slots=True)
class _Run:
    keeping: bool = False
    interrupted: bool = False
    stopping: bool = False
    cluster_started: bool = False


async def run_demo(
    opts: DemoOptions,
    schedulers: Sequence[Callable[[Path], InProcessScheduler]],
    workload: Workload,
    say: Say,
    complain: Say,
) -> int:
    """Run the demo; return the exit code. *schedulers* are built once the kubeconfig exists."""
    run = _Run()
    code = 0
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with anyio.create_task_group() as tg:
            main = anyio.CancelScope()

            async def on_signals() -> None:
                async for signum in signals:
                    if run.stopping:
                        say("still stopping the control plane; please wait")
                        continue
                    run.stopping = True
                    run.interrupted = not run.keeping
                    say(
                        f"{signal.Signals(signum).name}: stopping the schedulers and the "
                        "control plane"
                    )
                    main.cancel()

            tg.start_soon(on_signals)
            with main:
                try:
                    code = await _demo(opts, schedulers, workload, say, run)
                except (ClusterError, ApiError) as exc:
                    complain(f"asched demo: {exc}")
                    code = 1
            run.stopping = True
            if run.cluster_started:
                say("Stopped: every process the demo started and its work directory are gone.")
            tg.cancel_scope.cancel()
    return EXIT_INTERRUPTED if run.interrupted else code


async def _demo(
    opts: DemoOptions,
    schedulers: Sequence[Callable[[Path], InProcessScheduler]],
    workload: Workload,
    say: Say,
    run: _Run,
) -> int:
    began = time.monotonic()
    specs = demo_nodes(opts.nodes)
    say("Starting a local control plane (etcd, kube-apiserver, kube-controller-manager, kwok)")
    async with LocalCluster(bin_dir=opts.bin_dir) as cluster:
        run.cluster_started = True
        pids = " ".join(f"{name}={pid}" for name, pid in cluster.pids.items())
        say(f"Control plane ready in {time.monotonic() - began:.1f}s at {cluster.server}")
        say(f"  work dir: {cluster.work_dir}")
        say(f"  pids: {pids}")
        names = await cluster.create_nodes(specs)
        with anyio.move_on_after(NODES_READY_TIMEOUT) as waited:
            await cluster.wait_nodes_ready(names)
        if waited.cancelled_caught:
            raise ClusterStartError(f"kwok did not mark the nodes Ready in {NODES_READY_TIMEOUT}s")
        say(f"{len(names)} kwok nodes Ready:")
        for line in _node_table(specs):
            say(f"  {line}")
        instances = [make(cluster.scheduler_kubeconfig) for make in schedulers]
        async with anyio.create_task_group() as tg:
            for inst in instances:
                await tg.start(inst.run)
            say(
                "asched running in this process, as "
                + ", ".join(f"{', '.join(inst.profiles)} ({inst.name})" for inst in instances)
            )
            async with cluster.admin_client() as admin:
                await submit(admin, workload)
                say(
                    f"Submitted {len(workload.pods)} pods and {len(workload.pod_groups)} "
                    f"PodGroup(s) to namespace {workload.namespace}; placements:"
                )
                progress = Progress(workload, say)
                with anyio.move_on_after(opts.settle_timeout):
                    await progress.follow(admin)
            all_settled = progress.settled
            if not all_settled:
                say(f"(not every pod was decided within {opts.settle_timeout:.0f}s)")
            say("")
            for line in render_rows(build_rows(workload, progress.states)):
                say(line)
            say("")
            seconds = round(time.monotonic() - began, 1)
            log.info("demo_finished", seconds=seconds, settled=all_settled)
            say(f"Demo finished in {seconds:.1f}s.")
            if opts.keep:
                _print_keep_help(cluster, workload, opts, say)
                run.keeping = True
                await anyio.sleep_forever()
            tg.cancel_scope.cancel()
        say("Stopping the schedulers and the control plane")
    return 0 if all_settled else 1


async def submit(admin: ClusterClient, workload: Workload) -> None:
    ns = workload.namespace
    await admin.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    for group in workload.pod_groups:
        # scheduler-plugins' scheduling.x-k8s.io/v1alpha1 or the native scheduling.k8s.io/v1beta1.
        await admin.post(f"/apis/{group['apiVersion']}/namespaces/{ns}/podgroups", group)
    for path, body in workload.objects:
        await admin.post(path, body)
    for pod in workload.pods:
        if pod.manifest is not None:
            await admin.post(f"/api/v1/namespaces/{ns}/pods", pod.manifest)


def _node_table(specs: Sequence[NodeSpec]) -> list[str]:
    rows = []
    for s in specs:
        taints = ",".join(f"{t.key}={t.value}:{t.effect}" for t in s.taints)
        rows.append(
            (
                s.name,
                s.cpu,
                s.memory,
                str(s.gpus or "-"),
                s.labels.get(ZONE, "-"),
                s.labels.get(RACK, "-"),
                s.labels.get("node-type", "-"),
                taints or "-",
            )
        )
    return format_table(
        ("NODE", "CPU", "MEMORY", "GPU", "ZONE", "RACK", "NODE-TYPE", "TAINTS"), rows
    )


def _print_keep_help(
    cluster: LocalCluster, workload: Workload, opts: DemoOptions, say: Say
) -> None:
    kubeconfig = cluster.admin_kubeconfig
    pending = next((p.name for p in workload.pods if p.expect_pending), "")
    say("The cluster and the schedulers keep running. Try:")
    say(f"  kubectl --kubeconfig {kubeconfig} -n {workload.namespace} get pods -o wide")
    if pending:
        config = f" --config {opts.explain_config}" if opts.explain_config else ""
        say(f"  asched explain {workload.namespace}/{pending} --kubeconfig {kubeconfig}{config}")
    say(f"admin kubeconfig: {kubeconfig}")
    say("Press Ctrl-C to stop and clean up.")
