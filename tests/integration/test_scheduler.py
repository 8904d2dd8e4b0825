"""asched end to end: a real API server, kwok nodes, asched as a process with its own RBAC."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from asched.api import Resource, decode_node, decode_pod
from asched.localcluster import ClusterClient, NodeSpec
from tests.builders import make_pod
from tests.integration.conftest import NodeFactory
from tests.integration.harness import AschedHarness, profile_config
from tests.integration.helpers import poll

SEED_CONFIG = Path(__file__).parents[1] / "data" / "configs" / "seed-node-affinity-plugin.yaml"


async def test_seed_scenario_gpu_pod_lands_on_gpu_node(
    asched: AschedHarness, namespace: str, kwok_nodes: NodeFactory
) -> None:
    """The seed article's config as written; its gpu-pod goes to a node-type=gpu node."""
    nodes = await kwok_nodes(
        [
            NodeSpec("cpu-0"),
            NodeSpec("cpu-1"),
            NodeSpec("cpu-2"),
            NodeSpec("gpu-0", gpus=2, labels={"node-type": "gpu"}),
            NodeSpec("gpu-1", gpus=2, labels={"node-type": "gpu"}),
        ]
    )
    gpu_nodes = {n for n in nodes if "-gpu-" in n}
    # The seed's pod, verbatim but for the namespace.
    gpu_pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gpu-pod"},
        "spec": {
            "schedulerName": "custom-scheduler",
            "containers": [{"name": "gpu-container", "image": "nginx"}],
            "nodeSelector": {"node-type": "gpu"},
        },
    }
    # No nodeSelector: the plugin's labelKey/labelValue args alone send it to a GPU node.
    plain = make_pod("plain", namespace).scheduler("custom-scheduler").cpu("100m").manifest()
    other = make_pod("other", namespace).scheduler("someone-else").manifest()
    async with asched.run(SEED_CONFIG) as proc:
        for body in (gpu_pod, plain, other):
            await asched.create_pod(body)
        bound = await asched.wait_bound({"gpu-pod", "plain"})
        assert bound["gpu-pod"] in gpu_nodes
        assert bound["plain"] in gpu_nodes
        await anyio.sleep(2)
        others = {p["metadata"]["name"]: p for p in await asched.pods()}
        assert not others["other"]["spec"].get("nodeName")
        assert not await asched.events("other")
        scheduled = await asched.wait_event("gpu-pod", "Scheduled", within=20)
        want = f"Successfully assigned {namespace}/gpu-pod to {bound['gpu-pod']}"
        assert scheduled["note"] == want
        assert "config_deviation" in proc.logs()


async def test_unschedulable_pod_reports_and_is_rescued_by_node_add(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> None:
    await kwok_nodes(
        [NodeSpec(f"a{i}", cpu="4", labels={"zone": "a"}) for i in range(3)]
        + [NodeSpec(f"b{i}", cpu="4") for i in range(2)]
    )
    pod = (
        make_pod("big", namespace)
        .scheduler("fit-test")
        .cpu("8")
        .node_selector({"zone": "a"})
        .manifest()
    )
    async with asched.run(profile_config("fit-test")):
        await asched.create_pod(pod)
        event = await asched.wait_event("big", "FailedScheduling", within=30)
        expected = (
            "0/5 nodes are available: 2 node(s) didn't match Pod's node "
            "affinity/selector, 3 Insufficient cpu."
        )
        assert event["note"].startswith(expected)
        assert event["type"] == "Warning"

        async def condition() -> dict[str, Any] | None:
            p = await admin.get(f"/api/v1/namespaces/{namespace}/pods/big")
            for c in p.get("status", {}).get("conditions", []):
                if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable":
                    return dict(c)
            return None

        with anyio.fail_after(30):
            cond = await poll(condition, interval=0.2)
        assert cond["status"] == "False"
        assert cond["message"].startswith(expected)

        # A node that fits arrives: the NodeAdd event (not the 5-minute flush) brings the
        # pod back, so it binds within seconds.
        names = await kwok_nodes([NodeSpec("big-a", cpu="16", labels={"zone": "a"})])
        bound = await asched.wait_bound({"big"}, within=20)
        assert bound["big"] == names[0]


async def test_thousand_pods_on_hundred_nodes_never_overcommit(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> None:
    # 100 nodes x 2 CPU fit 1300 pods of 150m; 1000 pods leave little slack.
    await kwok_nodes(
        [NodeSpec(f"n{i:03d}", cpu="2", memory="4Gi") for i in range(100)], ready_within=120
    )
    total = 1000
    limiter = anyio.Semaphore(32)

    async def create(i: int) -> None:
        async with limiter:
            await asched.create_pod(
                make_pod(f"p{i:04d}", namespace)
                .scheduler("bulk-test")
                .cpu("150m")
                .memory("100Mi")
                .manifest(),
            )

    async with anyio.create_task_group() as tg:
        for i in range(total):
            tg.start_soon(create, i)
    async with asched.run(profile_config("bulk-test")):
        start = anyio.current_time()
        bound = await asched.wait_bound({f"p{i:04d}" for i in range(total)}, within=240)
        elapsed = anyio.current_time() - start
    print(f"\n1000 pods bound in {elapsed:.1f}s ({total / elapsed:.0f} pods/s incl. startup)")
    per_node: dict[str, Resource] = {}
    for raw in await asched.pods():
        pod = decode_pod(raw)
        per_node.setdefault(pod.node_name, Resource()).add(pod.requests)
    nodes = {
        n["metadata"]["name"]: decode_node(n) for n in (await admin.get("/api/v1/nodes"))["items"]
    }
    for node_name, used in per_node.items():
        alloc = nodes[node_name].allocatable
        assert used.milli_cpu <= alloc.milli_cpu, node_name
        assert used.memory <= alloc.memory, node_name
    assert Counter(bound.values()).most_common(1)[0][1] <= 13


async def test_sigkill_midway_loses_nothing_and_binds_once(
    asched: AschedHarness, namespace: str, kwok_nodes: NodeFactory
) -> None:
    await kwok_nodes([NodeSpec(f"k{i:02d}", cpu="8") for i in range(20)])
    config = profile_config("kill-test")
    total = 400
    async with anyio.create_task_group() as tg:
        for i in range(total):
            tg.start_soon(
                asched.create_pod,
                make_pod(f"p{i:03d}", namespace).scheduler("kill-test").cpu("100m").manifest(),
            )
    first_seen: dict[str, str] = {}

    async def bound_now() -> int:
        for p in await asched.pods():
            node = p["spec"].get("nodeName")
            if node:
                assert first_seen.setdefault(p["metadata"]["name"], node) == node
        return len(first_seen)

    async with asched.run(config) as proc:

        async def a_third_bound() -> bool | None:
            return True if await bound_now() >= total // 3 else None

        with anyio.fail_after(60):
            await poll(a_third_bound, interval=0.02)
        proc.kill()
    killed_at = await bound_now()
    assert killed_at < total, "asched finished before it could be killed"
    async with asched.run(config):
        await asched.wait_bound({f"p{i:03d}" for i in range(total)}, within=120)
    assert await bound_now() == total
