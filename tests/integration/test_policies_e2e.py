"""asched-policies end to end: a real asched process, with the package's entry points
installed, places pods with RegionFence + StrongestCPU on the local control plane.

Kept in the main suite, not in examples/policies/tests: it needs the control-plane
fixtures (tests/cluster_fixtures.py), and the policies' own tests must run from the
installed wheels alone (tests/integration/test_sdk_wheel.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from asched.testing import make_pod
from asched_policies.region_fence import ERR_REASON
from tests.integration.asched_proc import running_asched
from tests.integration.conftest import SKIP_ENV, NodeFactory
from tests.integration.helpers import poll

REGION = "topology.kubernetes.io/region"
REGIONS = "policies.asched.dev/regions"

E2E_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: policies-e2e
    plugins:
      multiPoint:
        enabled:
          - name: RegionFence
          - name: StrongestCPU
            weight: 10
    pluginConfig:
      - name: RegionFence
        args:
          defaultRegions: [cn-north]
"""


async def _events(admin: ClusterClient, ns: str, pod: str) -> list[dict[str, Any]]:
    body = await admin.get(
        f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
        params={"fieldSelector": f"regarding.name={pod}"},
    )
    items: list[dict[str, Any]] = body["items"]
    return items


async def _node_of(admin: ClusterClient, ns: str, pod: str) -> str | None:
    body = await admin.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
    node: str = body["spec"].get("nodeName", "")
    return node or None


@pytest.mark.integration
@pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1")
async def test_pods_land_on_the_strongest_node_inside_their_regions(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    names = await kwok_nodes(
        [
            NodeSpec("north-small", cpu="4", labels={REGION: "cn-north"}),
            NodeSpec("north-big", cpu="8", labels={REGION: "cn-north"}),
            NodeSpec("east-big", cpu="16", labels={REGION: "cn-east"}),
            NodeSpec("west-huge", cpu="32", labels={REGION: "us-west"}),
        ]
    )
    node = {n.split("-", 2)[-1]: n for n in names}  # "<prefix>-north-big" -> "north-big"
    assert set(node) == {"north-small", "north-big", "east-big", "west-huge"}
    config = tmp_path / "config.yaml"
    config.write_text(E2E_CONFIG)

    def pod(name: str, regions: str | None = None) -> dict[str, Any]:
        b = make_pod(name, namespace).scheduler("policies-e2e").cpu("100m")
        if regions is not None:
            b.annotation(REGIONS, regions)
        return b.manifest()

    async with running_asched(config, cluster.scheduler_kubeconfig, tmp_path / "asched.log"):
        for body in (
            pod("north-or-east", "cn-north,cn-east"),
            pod("north-only", "cn-north"),
            pod("by-default"),
            pod("nowhere", "eu-central"),
        ):
            await admin.post(f"/api/v1/namespaces/{namespace}/pods", body)

        async def placed() -> dict[str, str] | None:
            got = {
                p: await _node_of(admin, namespace, p)
                for p in ("north-or-east", "north-only", "by-default")
            }
            return None if None in got.values() else {k: v for k, v in got.items() if v}

        with anyio.fail_after(60):
            bound = await poll(placed, interval=0.2)
        # The strongest node overall (west-huge) is outside every fence.
        assert bound == {
            "north-or-east": node["east-big"],
            "north-only": node["north-big"],
            "by-default": node["north-big"],
        }

        async def failed() -> dict[str, Any] | None:
            for e in await _events(admin, namespace, "nowhere"):
                if e.get("reason") == "FailedScheduling":
                    return e
            return None

        with anyio.fail_after(30):
            event = await poll(failed, interval=0.2)
        assert ERR_REASON in event["note"]
        assert await _node_of(admin, namespace, "nowhere") is None

        # Relabelling a node into the pod's fence requeues it through RegionFence's
        # queueing hint (seconds, not the 5-minute unschedulable flush).
        await admin.patch(
            f"/api/v1/nodes/{node['north-small']}", {"metadata": {"labels": {REGION: "eu-central"}}}
        )

        async def rescued() -> str | None:
            return await _node_of(admin, namespace, "nowhere")

        with anyio.fail_after(20):
            assert await poll(rescued, interval=0.2) == node["north-small"]
