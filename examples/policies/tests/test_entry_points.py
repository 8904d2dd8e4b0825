"""The package as asched sees it: entry points, a config that enables the policies, and
a real scheduler process placing pods with RegionFence + StrongestCPU.

(a) and (b) need the package installed (hack/env.sh does `pip install -e
examples/policies`); (c) also needs the control-plane binaries.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio
import pytest
from asched.app import build_registry
from asched.config import ConfigError, load_config
from asched.framework.registry import ENTRY_POINT_GROUP
from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from tests.builders import make_pod
from tests.integration.asched_proc import running_asched
from tests.integration.conftest import SKIP_ENV, NodeFactory
from tests.integration.helpers import poll

import asched_policies
from asched_policies.gpu_resource import GPUResourceArgs
from asched_policies.location import LocationArgs
from asched_policies.region_fence import ERR_REASON, RegionFenceArgs

POLICIES = {"StrongestCPU", "RegionFence", "GPUDriver", "CPUUtilization", "GPUResource", "Location"}
REGION = "topology.kubernetes.io/region"
REGIONS = "policies.asched.dev/regions"


# --- (a) entry points ---------------------------------------------------------------


def test_entry_points_name_the_package_specs() -> None:
    ours = {
        ep.name: ep
        for ep in entry_points(group=ENTRY_POINT_GROUP)
        if ep.dist is not None and ep.dist.name == "asched-policies"
    }
    assert set(ours) == POLICIES
    assert {ep.name: ep.load() for ep in ours.values()} == {
        spec.name: spec for spec in asched_policies.SPECS
    }


def test_build_registry_includes_every_policy() -> None:
    registry = build_registry()
    assert set(registry.names()) >= POLICIES
    by_name = {spec.name: spec for spec in asched_policies.SPECS}
    for name in POLICIES:
        assert registry.get(name) is by_name[name]


# --- (b) a KubeSchedulerConfiguration enabling them --------------------------------

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: policies
    plugins:
      multiPoint:
        enabled:
          - name: RegionFence
          - name: GPUDriver
          - name: StrongestCPU
            weight: 10
          - name: CPUUtilization
          - name: GPUResource
          - name: Location
    pluginConfig:
      - name: RegionFence
        args:
          defaultRegions: [cn-north]
      - name: GPUResource
        args:
          strategy: LeastAllocated
"""


def test_config_enables_the_policies() -> None:
    profile = load_config(CONFIG, build_registry()).profile("policies")
    assert profile is not None
    for point in ("preFilter", "filter"):
        assert {"RegionFence", "GPUDriver"} <= set(profile.enabled(point))
    assert {"GPUResource", "Location"} <= set(profile.enabled("preScore"))
    weights = profile.score_weights()
    assert weights["StrongestCPU"] == 10
    assert {"CPUUtilization", "GPUResource", "Location"} <= set(weights)
    assert "RegionFence" not in weights
    args = profile.plugin_args
    assert args["RegionFence"] == RegionFenceArgs(default_regions=frozenset({"cn-north"}))
    assert args["GPUResource"] == GPUResourceArgs(strategy="LeastAllocated")
    assert args["Location"] == LocationArgs()  # defaulted: not in pluginConfig


@pytest.mark.parametrize(
    ("args", "path"),
    [
        pytest.param(
            "strategy: Spread", "profiles[0].pluginConfig[0].args.strategy", id="bad-value"
        ),
        pytest.param("typo: 1", "profiles[0].pluginConfig[0].args.typo", id="unknown-field"),
    ],
)
def test_config_reports_policy_args_errors_with_their_path(args: str, path: str) -> None:
    config = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: policies
    plugins:
      score:
        enabled: [{{name: GPUResource}}]
    pluginConfig:
      - name: GPUResource
        args: {{{args}}}
"""
    with pytest.raises(ConfigError) as err:
        load_config(config, build_registry())
    assert [p for p, _ in err.value.problems] == [path]


# --- (c) end to end -----------------------------------------------------------------

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
