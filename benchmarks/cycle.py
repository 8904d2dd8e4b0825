"""In-process cost of the scheduling cycle: no API server, no network.

Schedules M pods through the real framework (the default profile's plugins, the real
Algorithm, the real Cache and Snapshot) over N nodes, assuming each pod in the cache as
the scheduler does, and prints the CPU time per pod. This isolates the algorithm from the
wire, so a change to the framework runtime can be compared before and after.

    python -m benchmarks.cycle --nodes 5000 --pods 500 [--kind basic|spread]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anyio

from asched.api import Pod, decode_node, decode_pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.base.clock import RealClock
from asched.client.protocol import KubeClient
from asched.config import default_config
from asched.framework.cycle_state import CycleState
from asched.framework.handle import EventRecorder
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.services import RuntimeMetrics
from asched.informers import Store
from asched.plugins.registry import in_tree_registry
from asched.scheduler.algorithm import Algorithm

ZONES = ("zone-a", "zone-b", "zone-c")


def _node(i: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"node-{i}",
            "uid": f"nu-{i}",
            "labels": {
                "kubernetes.io/hostname": f"node-{i}",
                "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
            },
        },
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(i: int, kind: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}],
    }
    labels = {"app": "bench"}
    if kind == "spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ]
    return {
        "metadata": {"name": f"pod-{i}", "namespace": "bench", "uid": f"pu-{i}", "labels": labels},
        "spec": spec,
    }


class _Services:
    """The little a default profile asks of its scheduler when nothing is pending."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.clock = RealClock()
        self.client: KubeClient = None  # type: ignore[assignment]
        self.events: EventRecorder = _NoEvents()
        self.snapshot: SnapshotLister = snapshot
        self.parallelism = 16
        self.metrics: RuntimeMetrics | None = None
        self.pods: list[Pod] = []
        self.stores: dict[str, Store[Any]] = {}

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        # Services, ReplicaSets ... : none exist in this cluster.
        store: Store[Any] = self.stores.setdefault(request.resource, Store())
        return store

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self.pods

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return ()

    def has_nominated_pods(self) -> bool:
        return False

    def activate(self, pods: Sequence[Pod]) -> None:
        return None


class _NoEvents:
    def event(self, regarding: Any, event_type: str, reason: str, action: str, msg: str) -> None:
        return None


async def measure(nodes: int, pods: int, kind: str) -> float:
    """CPU seconds per pod for `pods` scheduling cycles over `nodes` nodes."""
    registry = in_tree_registry()
    cfg = default_config(registry)
    p = cfg.profiles[0]
    spec = ProfileSpec(
        p.scheduler_name,
        {point: [(r.name, r.weight) for r in refs] for point, refs in p.plugins.items()},
        dict(p.plugin_args),
    )
    cache, snapshot = Cache(), Snapshot()
    for i in range(nodes):
        cache.add_node(decode_node(_node(i)))
    services = _Services(snapshot)
    fwk = Framework(spec, registry, services)
    algo = Algorithm(0)
    todo = [decode_pod(_pod(i, kind)) for i in range(pods)]
    # The first refresh clones every node into the snapshot; a running scheduler pays
    # that once at start-up, not per pod, so it stays out of the measurement.
    cache.update_snapshot(snapshot)
    start = time.process_time()
    for pod in todo:
        cache.update_snapshot(snapshot)
        result = await algo.schedule_pod(fwk, CycleState(), pod, snapshot.node_infos())
        placed = replace(pod, node_name=result.suggested_host)
        cache.assume_pod(placed)
        services.pods.append(placed)
    return (time.process_time() - start) / pods


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=300)
    ap.add_argument("--kind", choices=("basic", "spread"), default="basic")
    args = ap.parse_args()
    per_pod = anyio.run(measure, args.nodes, args.pods, args.kind)
    print(f"kind={args.kind} nodes={args.nodes} pods={args.pods} ms_per_pod={per_pod * 1e3:.3f}")


if __name__ == "__main__":
    main()
