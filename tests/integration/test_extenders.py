"""Scheduler extenders end to end: asched as a process, a real extender process on
loopback (tests/integration/extender_server.py), the real API server and kwok nodes.

Asserted are outcomes: where pods land, who bound them, the FailedScheduling wording,
and what each extender was asked.
"""

from __future__ import annotations

from pathlib import Path

from asched.localcluster import ClusterClient, NodeSpec
from tests.builders import make_pod
from tests.integration.asched_proc import free_port
from tests.integration.conftest import NodeFactory
from tests.integration.extender_proc import running_extender
from tests.integration.harness import AschedHarness, profile_config

GPU = "example.com/gpu"


async def _node_count(admin: ClusterClient) -> int:
    return len((await admin.get("/api/v1/nodes"))["items"])


async def test_filter_extender_sends_pods_elsewhere_and_names_its_reason(
    asched: AschedHarness, namespace: str, kwok_nodes: NodeFactory, tmp_path: Path
) -> None:
    nodes = await kwok_nodes([NodeSpec("a"), NodeSpec("b"), NodeSpec("c")])
    async with (
        # Sees full nodes (not nodeCacheCapable) and every pod.
        running_extender(tmp_path, {"reject": {"-a": "busy", "-b": "busy"}}) as ext,
        # Manages the GPU: only asked about pods requesting it; the nodes do not list the
        # resource, so Fit must ignore it (ignoredByScheduler) for the pod to get here.
        running_extender(tmp_path, {"reject": {"-c": "no gpu left"}}) as gpu_ext,
    ):
        config = profile_config(
            "ext-filter",
            extenders=[
                {"urlPrefix": ext.url, "filterVerb": "filter"},
                {
                    "urlPrefix": gpu_ext.url,
                    "filterVerb": "filter",
                    "nodeCacheCapable": True,
                    "managedResources": [{"name": GPU, "ignoredByScheduler": True}],
                },
            ],
        )
        async with asched.run(config):
            await asched.create_pod(make_pod("plain", namespace).scheduler("ext-filter").manifest())
            assert await asched.wait_node("plain") == nodes[2]
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
            await asched.create_pod(gpu_pod)
            note = (await asched.wait_event("gpu", "FailedScheduling", within=60))["note"]
            total = await _node_count(asched.admin)
            assert note.startswith(f"0/{total} nodes are available: 1 no gpu left, 2 busy.")
            [gpu_asked] = [r for r in gpu_ext.requests() if r["pod"] == "gpu"][:1]
            assert gpu_asked["names"] == [nodes[2]]  # what the first extender kept


async def test_prioritize_steers_and_the_binder_extender_binds(
    asched: AschedHarness, namespace: str, kwok_nodes: NodeFactory, tmp_path: Path
) -> None:
    nodes = await kwok_nodes([NodeSpec("a"), NodeSpec("b"), NodeSpec("c")])
    rules = {"scores": {"-b": 10}, "bind": True}
    async with running_extender(tmp_path, rules, asched.cluster.scheduler_kubeconfig) as ext:
        config = profile_config(
            "ext-score",
            extenders=[
                {
                    "urlPrefix": ext.url,
                    "prioritizeVerb": "prioritize",
                    "weight": 5,
                    "bindVerb": "bind",
                    "nodeCacheCapable": True,
                    "httpTimeout": "10s",
                }
            ],
        )
        async with asched.run(config):
            for i in range(3):
                pod = make_pod(f"p{i}", namespace).scheduler("ext-score").cpu("100m")
                await asched.create_pod(pod.manifest())
            for i in range(3):
                assert await asched.wait_node(f"p{i}") == nodes[1]
            binds = [r for r in ext.requests() if r["verb"] == "bind"]
            assert sorted(r["pod"] for r in binds) == ["p0", "p1", "p2"]
            asked = [r for r in ext.requests() if r["verb"] == "prioritize"]
            assert asked
            assert set(nodes) <= set(asked[0]["names"])


async def test_ignorable_extender_down_is_skipped_a_required_one_fails_the_pod(
    asched: AschedHarness, namespace: str, kwok_nodes: NodeFactory
) -> None:
    await kwok_nodes([NodeSpec("a")])
    port = free_port()
    down = f"http://127.0.0.1:{port}/ext"  # nothing listens there
    ignorable = {"urlPrefix": down, "filterVerb": "filter", "ignorable": True}
    async with asched.run(profile_config("ext-down", extenders=[ignorable])):
        await asched.create_pod(make_pod("tolerated", namespace).scheduler("ext-down").manifest())
        assert await asched.wait_node("tolerated")

    required = {"urlPrefix": down, "filterVerb": "filter"}
    async with asched.run(profile_config("ext-down", extenders=[required])):
        await asched.create_pod(make_pod("stuck", namespace).scheduler("ext-down").manifest())
        note = (await asched.wait_event("stuck", "FailedScheduling", within=60))["note"]
        assert note == (
            f'Post "{down}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
        )
