"""asched-policies end to end: a real asched process, with the package's entry points
installed, places pods with RegionFence + StrongestCPU on the local control plane.

Kept in the main suite, not in examples/policies/tests: it needs the control-plane
fixtures (tests/cluster_fixtures.py), and the policies' own tests must run from the
installed wheels alone (tests/integration/test_sdk_wheel.py).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from asched.localcluster import NodeSpec
from asched.testing import make_pod
from asched_policies.region_fence import ERR_REASON
from tests.integration.conftest import SKIP_ENV, NodeFactory
from tests.integration.harness import AschedHarness

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


@pytest.mark.integration
@pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1")
async def test_pods_land_on_the_strongest_node_inside_their_regions(
    asched: AschedHarness, namespace: str, kwok_nodes: NodeFactory
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

    def pod(name: str, regions: str | None = None) -> dict[str, Any]:
        b = make_pod(name, namespace).scheduler("policies-e2e").cpu("100m")
        if regions is not None:
            b.annotation(REGIONS, regions)
        return b.manifest()

    async with asched.run(E2E_CONFIG):
        for body in (
            pod("north-or-east", "cn-north,cn-east"),
            pod("north-only", "cn-north"),
            pod("by-default"),
            pod("nowhere", "eu-central"),
        ):
            await asched.create_pod(body)

        bound = await asched.wait_bound({"north-or-east", "north-only", "by-default"}, within=60)
        # The strongest node overall (west-huge) is outside every fence.
        assert bound == {
            "north-or-east": node["east-big"],
            "north-only": node["north-big"],
            "by-default": node["north-big"],
        }

        event = await asched.wait_event("nowhere", "FailedScheduling", within=30)
        assert ERR_REASON in event["note"]
        assert await asched.node_of("nowhere") is None

        # Relabelling a node into the pod's fence requeues it through RegionFence's
        # queueing hint (seconds, not the 5-minute unschedulable flush).
        await asched.admin.patch(
            f"/api/v1/nodes/{node['north-small']}", {"metadata": {"labels": {REGION: "eu-central"}}}
        )

        assert await asched.wait_node("nowhere", within=20) == node["north-small"]
