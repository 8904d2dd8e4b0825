"""Scheduler extenders end to end: asched as a process, a real extender process on
loopback (tests/integration/extender_server.py), the real API server and kwok nodes.

Asserted are outcomes: where pods land, who bound them, the FailedScheduling wording,
and what each extender was asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from tests.builders import make_pod
from tests.integration.asched_proc import free_port, running_asched
from tests.integration.conftest import NodeFactory
from tests.integration.extender_proc import running_extender
from tests.integration.helpers import poll

GPU = "example.com/gpu"


def _config(tmp_path: Path, scheduler: str, extenders: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        f"  - schedulerName: {scheduler}\n"
        "extenders:\n" + extenders
    )
    return path


async def _node_of(admin: ClusterClient, ns: str, pod: str, within: float = 60) -> str:
    async def check() -> str | None:
        body = await admin.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
        node: str | None = body["spec"].get("nodeName") or None
        return node

    with anyio.fail_after(within):
        return await poll(check, interval=0.2)


async def _failed_scheduling(admin: ClusterClient, ns: str, pod: str, within: float = 60) -> str:
    async def check() -> str | None:
        body = await admin.get(
            f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
            params={"fieldSelector": f"regarding.name={pod}"},
        )
        for e in body["items"]:
            if e.get("reason") == "FailedScheduling":
                note: str = e["note"]
                return note
        return None

    with anyio.fail_after(within):
        return await poll(check, interval=0.2)


async def _node_count(admin: ClusterClient) -> int:
    return len((await admin.get("/api/v1/nodes"))["items"])


async def _create(admin: ClusterClient, ns: str, body: dict[str, Any]) -> None:
    await admin.post(f"/api/v1/namespaces/{ns}/pods", body)


async def test_filter_extender_sends_pods_elsewhere_and_names_its_reason(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    nodes = await kwok_nodes([NodeSpec("a"), NodeSpec("b"), NodeSpec("c")])
    async with (
        # Sees full nodes (not nodeCacheCapable) and every pod.
        running_extender(tmp_path, {"reject": {"-a": "busy", "-b": "busy"}}) as ext,
        # Manages the GPU: only asked about pods requesting it; the nodes do not list the
        # resource, so Fit must ignore it (ignoredByScheduler) for the pod to get here.
        running_extender(tmp_path, {"reject": {"-c": "no gpu left"}}) as gpu_ext,
    ):
        config = _config(
            tmp_path,
            "ext-filter",
            f"  - urlPrefix: {ext.url}\n"
            "    filterVerb: filter\n"
            f"  - urlPrefix: {gpu_ext.url}\n"
            "    filterVerb: filter\n"
            "    nodeCacheCapable: true\n"
            "    managedResources:\n"
            f"      - name: {GPU}\n"
            "        ignoredByScheduler: true\n",
        )
        async with running_asched(config, cluster.scheduler_kubeconfig, tmp_path / "asched.log"):
            await _create(
                admin, namespace, make_pod("plain", namespace).scheduler("ext-filter").manifest()
            )
            assert await _node_of(admin, namespace, "plain") == nodes[2]
            asked = [r for r in ext.requests() if r["pod"] == "plain"]
            assert asked[0]["verb"] == "filter"
            assert asked[0]["names"] is None  # full Nodes, not names
            assert set(nodes) <= set(asked[0]["nodes"])
            assert asked[0]["containers"] == ["c"]  # the pod as the API server has it
            assert not [r for r in gpu_ext.requests() if r["pod"] == "plain"]

            # Every node rejected, by the two extenders together: the event says why.
            gpu_pod = make_pod("gpu", namespace).scheduler("ext-filter").manifest()
            # An extended resource needs a limit (the API server copies it to requests).
            gpu_pod["spec"]["containers"][0]["resources"] = {"limits": {GPU: "1"}}
            await _create(admin, namespace, gpu_pod)
            note = await _failed_scheduling(admin, namespace, "gpu")
            total = await _node_count(admin)
            assert note.startswith(f"0/{total} nodes are available: 1 no gpu left, 2 busy.")
            [gpu_asked] = [r for r in gpu_ext.requests() if r["pod"] == "gpu"][:1]
            assert gpu_asked["names"] == [nodes[2]]  # what the first extender kept


async def test_prioritize_steers_and_the_binder_extender_binds(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    nodes = await kwok_nodes([NodeSpec("a"), NodeSpec("b"), NodeSpec("c")])
    rules = {"scores": {"-b": 10}, "bind": True}
    async with running_extender(tmp_path, rules, cluster.scheduler_kubeconfig) as ext:
        config = _config(
            tmp_path,
            "ext-score",
            f"  - urlPrefix: {ext.url}\n"
            "    prioritizeVerb: prioritize\n"
            "    weight: 5\n"
            "    bindVerb: bind\n"
            "    nodeCacheCapable: true\n"
            "    httpTimeout: 10s\n",
        )
        async with running_asched(config, cluster.scheduler_kubeconfig, tmp_path / "asched.log"):
            for i in range(3):
                pod = make_pod(f"p{i}", namespace).scheduler("ext-score").cpu("100m")
                await _create(admin, namespace, pod.manifest())
            for i in range(3):
                assert await _node_of(admin, namespace, f"p{i}") == nodes[1]
            binds = [r for r in ext.requests() if r["verb"] == "bind"]
            assert sorted(r["pod"] for r in binds) == ["p0", "p1", "p2"]
            asked = [r for r in ext.requests() if r["verb"] == "prioritize"]
            assert asked
            assert set(nodes) <= set(asked[0]["names"])


async def test_ignorable_extender_down_is_skipped_a_required_one_fails_the_pod(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    await kwok_nodes([NodeSpec("a")])
    port = free_port()
    down = f"http://127.0.0.1:{port}/ext"  # nothing listens there
    ignorable = _config(
        tmp_path,
        "ext-down",
        f"  - urlPrefix: {down}\n    filterVerb: filter\n    ignorable: true\n",
    )
    async with running_asched(ignorable, cluster.scheduler_kubeconfig, tmp_path / "a1.log"):
        await _create(
            admin, namespace, make_pod("tolerated", namespace).scheduler("ext-down").manifest()
        )
        assert await _node_of(admin, namespace, "tolerated")

    required = _config(tmp_path, "ext-down", f"  - urlPrefix: {down}\n    filterVerb: filter\n")
    async with running_asched(required, cluster.scheduler_kubeconfig, tmp_path / "a2.log"):
        await _create(
            admin, namespace, make_pod("stuck", namespace).scheduler("ext-down").manifest()
        )
        note = await _failed_scheduling(admin, namespace, "stuck")
        assert note == (
            f'Post "{down}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
        )
