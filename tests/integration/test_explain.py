"""`asched explain` against a real API server: the answers, and that it writes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import orjson

from asched.app import build_registry
from asched.client.kubeconfig import load_connection
from asched.client.rest import RestClient as KubeRestClient
from asched.config import load_config
from asched.explain.model import Explanation
from asched.explain.render import render_text
from asched.explain.runner import explain_pod
from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from tests.builders import make_pod
from tests.integration.conftest import NodeFactory

SCHEDULER = "explain-test"
ZONE = "explain.asched.dev/zone"
CONFIG = f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: {SCHEDULER}
"""


async def _explain(cluster: LocalCluster, namespace: str, pod: str) -> Explanation:
    registry = build_registry()
    config = load_config(CONFIG, registry)
    connection = await load_connection(str(cluster.admin_kubeconfig))
    async with KubeRestClient(connection) as client:
        return await explain_pod(client, namespace, pod, config, registry)


async def _nodes(kwok_nodes: NodeFactory) -> dict[str, str]:
    """short name -> real name: two small zone-a nodes, a big and a medium zone-b node."""
    specs = [
        NodeSpec("a0", cpu="2", labels={ZONE: "a"}),
        NodeSpec("a1", cpu="2", labels={ZONE: "a"}),
        NodeSpec("b0", cpu="16", memory="64Gi", labels={ZONE: "b"}),
        NodeSpec("b1", cpu="8", memory="64Gi", labels={ZONE: "b"}),
    ]
    names = await kwok_nodes(specs)
    return {s.name: n for s, n in zip(specs, names, strict=True)}


async def _snapshot_of_writes(admin: ClusterClient, namespace: str) -> tuple[list[Any], list[Any]]:
    pods = await admin.list(f"/api/v1/namespaces/{namespace}/pods")
    events = await admin.list(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
    return [
        (p["metadata"]["name"], p["metadata"]["resourceVersion"], p["spec"].get("nodeName"))
        for p in pods
    ], events


async def test_rejections_by_two_plugins_on_different_nodes(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    nodes = await _nodes(kwok_nodes)
    pod = (
        make_pod("stuck", namespace)
        .scheduler(SCHEDULER)
        .cpu("4")
        .node_selector({ZONE: "a"})
        .manifest()
    )
    await admin.post(f"/api/v1/namespaces/{namespace}/pods", pod)
    before = await _snapshot_of_writes(admin, namespace)

    out = await _explain(cluster, namespace, "stuck")

    verdicts = {n.node: n.verdict for n in out.nodes}
    for short in ("a0", "a1"):
        assert verdicts[nodes[short]].plugin == "NodeResourcesFit"
        assert verdicts[nodes[short]].message == "Insufficient cpu"
    for short in ("b0", "b1"):
        assert verdicts[nodes[short]].plugin == "NodeAffinity"
        assert verdicts[nodes[short]].message == (
            "node(s) didn't match Pod's node affinity/selector"
        )
    assert out.selected == ""
    assert "Insufficient cpu" in out.fit_error
    text = "\n".join(render_text(out))
    for short, plugin in (("a0", "NodeResourcesFit"), ("b0", "NodeAffinity")):
        row = next(line for line in text.splitlines() if line.startswith(nodes[short] + " "))
        assert plugin in row
    # Read-only: the pod is untouched and no Event was recorded.
    assert await _snapshot_of_writes(admin, namespace) == before


async def test_a_feasible_pod_shows_scores_and_the_pick(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    nodes = await _nodes(kwok_nodes)
    pod = (
        make_pod("fits", namespace)
        .scheduler(SCHEDULER)
        .cpu("1")
        .memory("1Gi")
        .node_selector({ZONE: "b"})
        .manifest()
    )
    await admin.post(f"/api/v1/namespaces/{namespace}/pods", pod)
    before = await _snapshot_of_writes(admin, namespace)

    out = await _explain(cluster, namespace, "fits")

    assert sorted(out.feasible) == sorted([nodes["b0"], nodes["b1"]])
    # Both empty; the bigger node is less allocated and better balanced.
    assert out.selected == nodes["b0"]
    rows = {s.node: s for s in out.scores}
    assert rows[nodes["b0"]].total > rows[nodes["b1"]].total
    fit = rows[nodes["b0"]].plugins["NodeResourcesFit"]
    assert fit.weighted == fit.normalized * out.score_weights["NodeResourcesFit"]
    assert await _snapshot_of_writes(admin, namespace) == before

    # The command itself, JSON output.
    config = tmp_path / "explain.yaml"
    await anyio.Path(config).write_text(CONFIG)
    proc = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            [
                sys.executable,
                "-m",
                "asched",
                "explain",
                f"{namespace}/fits",
                "--kubeconfig",
                str(cluster.admin_kubeconfig),
                "--config",
                str(config),
                "--output",
                "json",
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
    )
    assert proc.returncode == 0, proc.stderr
    doc = orjson.loads(proc.stdout)
    assert doc["selected"] == nodes["b0"]
    assert doc["scores"][0]["node"] == nodes["b0"]
    assert "NodeResourcesFit" in doc["scores"][0]["plugins"]
    assert await _snapshot_of_writes(admin, namespace) == before
