"""Runs Kubernetes' own [sig-scheduling] e2e specs against asched and against kube-scheduler.

`hack/e2e.sh` builds the spec binary (hack/e2e: test/e2e/scheduling of k8s.io/kubernetes
v1.37.2, nothing else linked) and calls this module. For each scheduler in turn it starts a
fresh local control plane (asched.localcluster: etcd, kube-apiserver, kwok nodes) with
the kube-controller-manager controllers the specs rely on, starts that scheduler as the
cluster's default-scheduler, runs the binary with a ginkgo focus, and keeps ginkgo's JSON
report. Then it prints one table of both runs (tests/e2e/report.py) and exits 1 if asched
failed a spec that kube-scheduler passed.

    python -m tests.e2e.run --binary BIN --out DIR [--focus RE] [--skip RE]
                            [--schedulers asched,kube-scheduler]

Each run's logs (the scheduler's, every component's, the spec binary's) are kept in
DIR/<scheduler>/, since the cluster's own work directory is removed with it.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from asched.localcluster import LocalCluster, NodeSpec, find_binaries
from asched.localcluster.components import CONTROLLER_MANAGER, NATIVE_GANG_GATES
from asched.localcluster.process import spawn
from tests.e2e.report import SpecResult, compare, read_report, render_table
from tests.integration.asched_proc import running_asched

ASCHED = "asched"
KUBE = "kube-scheduler"
SCHEDULERS = (ASCHED, KUBE)

#: What the specs need from kube-controller-manager. The framework waits for each test
#: namespace's default ServiceAccount (serviceaccount) and its kube-root-ca.crt ConfigMap
#: (root-ca-certificate-publisher; framework.go, Framework.BeforeEach), and deletes the
#: namespace after the spec (namespace, garbage-collector); the specs create ReplicaSets,
#: ReplicationControllers, Deployments, StatefulSets, Jobs and DaemonSets, and preemption
#: reads PodDisruptionBudgets whose status the disruption controller keeps. The PodGroup
#: API spec deletes a PodGroup, which waits for podgroup-protection to lift its finalizer.
E2E_CONTROLLERS = (
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    "namespace-controller",
    "garbage-collector-controller",
    "replicaset-controller",
    "replicationcontroller-controller",
    "deployment-controller",
    "statefulset-controller",
    "job-controller",
    "daemonset-controller",
    "disruption-controller",
    "podgroup-protection-controller",
)

#: Two zones of two nodes each: the Multi-AZ specs need at least two zones, the
#: PodTopologySpread specs at least two nodes. Ephemeral storage is declared because the
#: local-storage spec fills every node's allocatable with it.
ZONES = ("zone-a", "zone-b")
NODES_PER_ZONE = 2

#: Generous: the whole suite takes minutes; one hung spec must not hang CI for ever.
SUITE_TIMEOUT = "90m"

#: One ginkgo seed for both runs, so both schedulers see the specs in the same order (a
#: spec's namespace is still being deleted while the next one starts).
SEED = 1

#: A failed spec runs once more (upstream's CI jobs pass the same flag), because of a race
#: in kwok v0.8.0, not in either scheduler: its pod-delete stage deletes by name, with no
#: uid precondition, so when a spec deletes a pod and at once creates another of the same
#: name (GetNodeThatCanRunPod, "without-label"), kwok may delete the new pod too. The
#: table marks a spec that passed only on its second attempt ("passed*2").
FLAKE_ATTEMPTS = 2

#: Specs that need a real kubelet, skipped for both schedulers. Each is here only because
#: kube-scheduler fails it on the kwok cluster too (`--no-skips` runs them), and its reason
#: says what kwok does not do.
KUBELET_SKIPS: dict[str, str] = {
    "[sig-scheduling] SchedulerPredicates validates pod overhead is considered along with "
    "resource limits of pods that are allowed to run verify pod overhead is accounted for": (
        "The spec adds example.com/beardsecond to a node's status.capacity only; a kubelet "
        "derives allocatable from capacity, kwok keeps the allocatable the node was created "
        "with, so no scheduler sees the resource: kube-scheduler's filler pod stays Pending "
        "with '0/4 nodes are available: 4 Insufficient example.com/beardsecond', as asched's."
    ),
    "[sig-scheduling] SchedulerPreemption validates various priority Pods preempt "
    "expectedly with the async preemption": (
        "The victims have a 79 s preStop hook and an 80 s grace period, which a kubelet "
        "honours, so they stay terminating while the spec checks each for a "
        "deletionTimestamp; kwok's pod-delete stage removes a terminating pod at once, so the "
        "spec's Get finds a victim gone (pods ... not found) for kube-scheduler as for asched."
    ),
}


def e2e_nodes() -> list[NodeSpec]:
    return [
        NodeSpec(
            name=f"e2e-{zone}-{i}",
            cpu="4",
            memory="16Gi",
            labels={
                "topology.kubernetes.io/region": "local",
                "topology.kubernetes.io/zone": zone,
            },
            extra={"ephemeral-storage": "100Gi"},
        )
        for zone in ZONES
        for i in range(NODES_PER_ZONE)
    ]


#: The node agents upstream's suite expects on every schedulable node (requiredPerNodePods
#: in test/e2e/framework/node/wait.go). Without them the preemption specs' BeforeEach
#: (WaitForTotalHealthy) polls for its full minute before going on, for every spec.
NODE_AGENTS = ("kube-proxy", "fluentd-elasticsearch", "node-problem-detector")
SYSTEM_NAMESPACE = "kube-system"
#: How long the node agents may take to run on every node.
AGENTS_TIMEOUT = 120


def node_agent(name: str) -> dict[str, Any]:
    """A DaemonSet of pause pods standing in for a node agent: no requests, so they change
    no spec's arithmetic, and system-node-critical priority, as a real kube-proxy has, so
    no spec's preemption picks them as victims."""
    labels = {"k8s-app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": SYSTEM_NAMESPACE},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": name, "image": "registry.k8s.io/pause:3.10.2"}],
                },
            },
        },
    }


async def start_node_agents(cluster: LocalCluster, nodes: int) -> None:
    """Create the agents' DaemonSets and wait until each runs a Ready pod on every node
    (the scheduler under test places them, as it would in a real cluster)."""
    base = f"/apis/apps/v1/namespaces/{SYSTEM_NAMESPACE}/daemonsets"
    async with cluster.admin_client() as client:
        for name in NODE_AGENTS:
            await client.post(base, node_agent(name))
        with anyio.fail_after(AGENTS_TIMEOUT):
            for name in NODE_AGENTS:
                while True:
                    status = (await client.get(f"{base}/{name}")).get("status") or {}
                    if status.get("numberReady") == status.get("desiredNumberScheduled") == nodes:
                        break
                    await anyio.sleep(0.5)


def controller_manager_flags(work_dir: Path) -> list[str]:
    """kube-controller-manager's flags for the specs, appended to LocalCluster's own (its
    --controllers is replaced: the last flag wins). The token controller signs with the
    cluster's service-account key and the publisher publishes kube-apiserver's serving
    certificate, both of which LocalCluster keeps in <work dir>/pki."""
    pki = work_dir / "pki"
    return [
        f"--controllers={','.join(E2E_CONTROLLERS)}",
        f"--service-account-private-key-file={pki / 'service-account.key'}",
        f"--root-ca-file={pki / 'apiserver.crt'}",
    ]


@asynccontextmanager
async def running_scheduler(name: str, cluster: LocalCluster, out: Path) -> AsyncIterator[None]:
    """*name* as the cluster's default-scheduler (the default profile), until exit."""
    log_path = out / f"{name}.log"
    if name == ASCHED:
        # No --config: asched's default is kube-scheduler's, one default-scheduler profile.
        async with running_asched(None, cluster.scheduler_kubeconfig, log_path):
            yield
        return
    config = out / "kube-scheduler.yaml"
    await anyio.Path(config).write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection:\n  kubeconfig: {cluster.admin_kubeconfig}\n"
        "leaderElection:\n  leaderElect: false\n"
    )
    gates = ",".join(f"{gate}=true" for gate in NATIVE_GANG_GATES)
    argv = [
        str(find_binaries().kube_scheduler),
        f"--config={config}",
        "--secure-port=0",
        # The gates kube-apiserver serves the native gang API with (the
        # [FeatureGate:GenericWorkload] specs need the scheduler's side too).
        f"--feature-gates={gates}",
        "--v=2",
    ]
    proc = await spawn(KUBE, argv, log_path)
    try:
        yield
    finally:
        await proc.stop(grace=5)


async def run_specs(binary: Path, kubeconfig: Path, out: Path, focus: str, skip: str) -> Path:
    """Run the spec binary once; return its JSON report. Its exit code is not the verdict
    (it is non-zero whenever any spec fails); the report is."""
    report = out / "report.json"
    argv = [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        "--provider=local",
        f"--report-dir={out}",
        f"--ginkgo.focus={focus}",
        f"--ginkgo.json-report={report}",
        f"--ginkgo.timeout={SUITE_TIMEOUT}",
        f"--ginkgo.seed={SEED}",
        f"--ginkgo.flake-attempts={FLAKE_ATTEMPTS}",
        "--ginkgo.no-color",
        "--ginkgo.v",
    ]
    if skip:
        argv.append(f"--ginkgo.skip={skip}")
    log_path = out / "specs.log"
    log = await anyio.to_thread.run_sync(log_path.open, "wb")
    try:
        proc = await anyio.run_process(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    finally:
        log.close()
    if not await anyio.Path(report).exists():
        tail = (await anyio.Path(log_path).read_text(errors="replace"))[-3000:]
        raise RuntimeError(f"the spec binary exited {proc.returncode} without a report:\n{tail}")
    return report


async def run_one(
    scheduler: str, binary: Path, out: Path, focus: str, skip: str
) -> list[SpecResult]:
    """A fresh cluster, *scheduler* as its default-scheduler, the specs; the logs kept."""
    await anyio.Path(out).mkdir(parents=True, exist_ok=True)
    # LocalCluster removes its work directory when it stops; the logs are copied out first.
    work_dir = out / "cluster"
    cluster = LocalCluster(
        work_dir=work_dir,
        extra_args={CONTROLLER_MANAGER: controller_manager_flags(work_dir)},
        start_timeout=180,
    )
    began = time.monotonic()
    async with cluster:
        try:
            nodes = await cluster.add_nodes(e2e_nodes())
            async with running_scheduler(scheduler, cluster, out):
                await start_node_agents(cluster, len(nodes))
                report = await run_specs(binary, cluster.admin_kubeconfig, out, focus, skip)
        finally:
            await anyio.to_thread.run_sync(_keep_logs, cluster.layout.logs_dir, out)
    results = await anyio.to_thread.run_sync(read_report, report)
    print(f">> {scheduler}: {len(results)} specs in {time.monotonic() - began:.0f}s", flush=True)
    return results


def _keep_logs(logs_dir: Path, out: Path) -> None:
    for path in logs_dir.glob("*.log"):
        shutil.copy(path, out / path.name)


async def run_all(args: argparse.Namespace) -> int:
    results: dict[str, list[SpecResult]] = {}
    skips = [args.skip] if args.skip else []
    if not args.no_skips:
        skips += [re.escape(spec) for spec in KUBELET_SKIPS]
    skip = "|".join(skips)
    for scheduler in args.schedulers:
        out = args.out.resolve() / scheduler
        results[scheduler] = await run_one(scheduler, args.binary, out, args.focus, skip)
    rows = compare(results.get(ASCHED, []), results.get(KUBE, []))
    print(render_table(rows), flush=True)
    if not args.no_skips:
        for spec, reason in KUBELET_SKIPS.items():
            print(f"skipped for both (needs a kubelet): {spec}\n    {reason}", flush=True)
    if set(args.schedulers) != set(SCHEDULERS):
        return 0
    return 1 if any(row.regression for row in rows) else 0


async def main_async(args: argparse.Namespace) -> int:
    """run_all, stopped cleanly (clusters and schedulers too) on SIGTERM or SIGINT: their
    processes run in sessions of their own, so nothing else would stop them."""
    code = 130
    async with anyio.create_task_group() as tg:

        async def cancel_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(cancel_on_signal)
        code = await run_all(args)
        tg.cancel_scope.cancel()
    return code


def _schedulers(value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = sorted(set(names) - set(SCHEDULERS))
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"schedulers are {', '.join(SCHEDULERS)}; got {value!r}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.run", description=__doc__)
    parser.add_argument("--binary", type=Path, required=True, help="the built spec binary")
    parser.add_argument("--out", type=Path, required=True, help="reports and logs go here")
    parser.add_argument("--focus", default=r"\[sig-scheduling\]", help="ginkgo focus regexp")
    parser.add_argument("--skip", default="", help="ginkgo skip regexp")
    parser.add_argument(
        "--no-skips",
        action="store_true",
        help="also run the specs KUBELET_SKIPS leaves out (to see that kube-scheduler fails "
        "them on kwok too)",
    )
    parser.add_argument(
        "--schedulers",
        type=_schedulers,
        default=list(SCHEDULERS),
        help="comma-separated, in run order (default asched,kube-scheduler); the verdict "
        "needs both",
    )
    args = parser.parse_args(argv)
    return anyio.run(main_async, args)


if __name__ == "__main__":
    sys.exit(main())
