"""Opportunistic batching side by side with kube-scheduler v1.37.2, where it decides.

The scenario harness runs every scenario through one long-lived scheduler, whose round
robin and batch state carry over between scenarios; batching depends on both, so this
test runs its own schedulers, each fresh, on one set of kwok nodes:

- 150 nodes of 4 CPUs, but the 121st (by name) has 64; every pod of the test selects
  these nodes only, by a label.
- percentageOfNodesToScore 1: a pod evaluates 100 feasible nodes from the round-robin
  start (never fewer).
- PodTopologySpread `defaultingType: List` with no constraints, so the pods are signable
  (the system defaults make every pod unsignable).
- Six alike pods, created before the scheduler starts (consecutive cycles, well within
  the 500 ms a ranking lives).

Both schedulers must batch the same way: the first pod evaluates 100 nodes, the other five
take hints (one node evaluated, one feasible), as each reports per pod (kube-scheduler's
"Successfully bound" line, asched's `pod_assumed`). Which nodes those are depends on the
node order of the snapshot, which for kube-scheduler is random at start (client-go's
watch-list hands its informer a map's iteration order; its first window held the big node
in the run that wrote this test), so placements are compared within asched: in name order
the first window misses
the big node, so batched pods never get it, while with
`--feature-gates OpportunisticBatching=false` the second pod's window starts at node 101
and takes it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import orjson
import yaml

from asched.localcluster import ClusterClient, LocalCluster, NodeSpec, find_binaries
from asched.localcluster.process import spawn
from tests.builders import make_pod
from tests.cluster_fixtures import NodeFactory, unique
from tests.integration.asched_proc import running_asched
from tests.integration.helpers import poll

LABEL = "batching.asched.dev/run"
BIG = 120
PODS = 6
#: (evaluated, feasible) per pod, sorted: one full search of 100 nodes, five hints.
EXPECTED = [(1, 1)] * (PODS - 1) + [(100, 100)]
BOUND = r"Successfully bound pod.*evaluatedNodes=(\d+) feasibleNodes=(\d+)"
Counts = tuple[int, int]


def _config(scheduler: str, kubeconfig: Path | None = None) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 1,
        "profiles": [
            {
                "schedulerName": scheduler,
                "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}],
            }
        ],
    }
    if kubeconfig is not None:
        cfg["clientConnection"] = {"kubeconfig": str(kubeconfig)}
        cfg["leaderElection"] = {"leaderElect": False}
    return cfg


async def _create_pods(admin: ClusterClient, namespace: str, scheduler: str, run: str) -> None:
    for i in range(PODS):
        pod = (
            make_pod(f"{scheduler}-{i}", namespace)
            .cpu("500m")
            .memory("1Gi")
            .node_selector({LABEL: run})
            .scheduler(scheduler)
        )
        await admin.post(f"/api/v1/namespaces/{namespace}/pods", pod.manifest())


async def _placements(admin: ClusterClient, namespace: str, scheduler: str) -> list[str]:
    """The nodes of the scheduler's pods once all are bound (pods in name order)."""

    async def bound() -> list[str] | None:
        pods = await admin.list(f"/api/v1/namespaces/{namespace}/pods")
        mine = sorted(
            (p for p in pods if p["spec"].get("schedulerName") == scheduler),
            key=lambda p: p["metadata"]["name"],
        )
        nodes = [p["spec"].get("nodeName") or "" for p in mine]
        return nodes if len(nodes) == PODS and all(nodes) else None

    with anyio.fail_after(60):
        return await poll(bound, interval=0.2)


async def _clear(admin: ClusterClient, namespace: str) -> None:
    await admin.delete(f"/api/v1/namespaces/{namespace}/pods", params={"gracePeriodSeconds": 0})

    async def gone() -> bool | None:
        return True if not await admin.list(f"/api/v1/namespaces/{namespace}/pods") else None

    with anyio.fail_after(60):
        await poll(gone, interval=0.2)


async def test_batched_pods_stay_in_the_first_window_as_kube_schedulers_do(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    run = unique("b")
    specs = [
        NodeSpec(f"n{i:03}", cpu="64" if i == BIG else "4", labels={LABEL: run}) for i in range(150)
    ]
    names = await kwok_nodes(specs, ready_within=120)
    big = names[BIG]

    # kube-scheduler, the reference.
    kube = f"{run}-kube"
    await _create_pods(admin, namespace, kube, run)
    cfg = tmp_path / "kube.yaml"
    cfg.write_text(yaml.safe_dump(_config(kube, cluster.admin_kubeconfig)))
    argv = [str(find_binaries().kube_scheduler), f"--config={cfg}", "--secure-port=0", "--v=3"]
    proc = await spawn("kube-scheduler", argv, tmp_path / "kube.log")
    try:
        await _placements(admin, namespace, kube)
    finally:
        await proc.stop(grace=5)
    kube_log = (tmp_path / "kube.log").read_text(errors="replace")
    hints = len(re.findall(r"OpportunisticBatch provided node hint", kube_log))
    assert hints == PODS - 1, kube_log[-3000:]
    kube_counts = sorted(
        (int(e), int(f))
        for e, f in re.findall(
            r"Successfully bound pod.*evaluatedNodes=(\d+) feasibleNodes=(\d+)", kube_log
        )
    )
    assert kube_counts == EXPECTED, kube_log[-3000:]
    await _clear(admin, namespace)

    async def asched(
        scheduler: str, extra: list[str]
    ) -> tuple[list[str], list[tuple[int, int]], str]:
        await _create_pods(admin, namespace, scheduler, run)
        cfg = tmp_path / f"{scheduler}.yaml"
        cfg.write_text(yaml.safe_dump(_config(scheduler)))
        log = tmp_path / f"{scheduler}.log"
        argv = ["--log-level", "debug", *extra]
        async with running_asched(cfg, cluster.scheduler_kubeconfig, log, argv) as proc:
            nodes = await _placements(admin, namespace, scheduler)
            metrics = await proc.metrics()
        await _clear(admin, namespace)
        counts = []
        for line in log.read_text(errors="replace").splitlines():
            if '"pod_assumed"' in line:
                rec = orjson.loads(line)
                counts.append((rec["evaluated"], rec["feasible"]))
        return nodes, sorted(counts), metrics

    asched_nodes, counts, metrics = await asched(f"{run}-asched", [])
    assert counts == kube_counts
    hint_used = f'scheduler_batch_attempts_total{{profile="{run}-asched",result="hint_used"}} 5.0'
    assert hint_used in metrics, [line for line in metrics.splitlines() if "batch" in line]
    assert big not in asched_nodes, asched_nodes

    fresh_nodes, counts, _ = await asched(
        f"{run}-off", ["--feature-gates", "OpportunisticBatching=false"]
    )
    assert counts == [(100, 100)] * PODS
    assert fresh_nodes.count(big) >= 2, fresh_nodes
