"""In-process cost of the pod group cycle on scheduler_perf's TopologyAwareScheduling shape.

podgroup/tas's templates: nodes of 4 CPU and 32Gi labelled `topology.kubernetes.io/rack:
rack-<index // 100>`, PodGroups of `--gang-size` members (minCount the same) with that key
as their topology constraint, members asking 100m and 100Mi. Each gang runs one real
GroupCycle (the default profile: GangScheduling, TopologyPlacementGenerator,
PodGroupPodsCount and the per-pod plugins) over the real Cache and Snapshot, with no API
server: the members go to a list instead of binding. Prints CPU per gang and a digest of
where every member went, so a change to the cycle can be checked for the same decisions.

    python -m benchmarks.gangcycle --nodes 1000 --gangs 300 [--cprofile tas.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import time
from collections.abc import Sequence
from typing import Any

import anyio

from asched import gctune
from asched.api import Pod, decode_node
from asched.api.workload import NativePodGroup
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.framework.runtime import Framework
from asched.framework.workloads import NATIVE_POD_GROUPS
from asched.informers import Store
from asched.logs import configure_logging
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.cycle import Assumed
from asched.scheduler.groupcycle import GroupCycle
from asched.scheduler.outcome import Outcomes
from asched.testing.builders import make_native_pod_group, make_pod
from asched.testing.profiles import default_profile
from benchmarks.cycle import _node as cycle_node
from benchmarks.cycle import _NoEvents, _Services

RACK = "topology.kubernetes.io/rack"
NAMESPACE = "tas-ns-0"


def _node(i: int) -> dict[str, Any]:
    """templates/node.yaml: benchmarks.cycle's node with the TAS labels and capacity."""
    node = cycle_node(i)
    node["metadata"]["labels"] = {
        "kubernetes.io/hostname": f"node-{i}",
        "topology.kubernetes.io/zone": f"zone-{i // 100}",
        RACK: f"rack-{i // 100}",
    }
    capacity = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    node["status"]["allocatable"] = node["status"]["capacity"] = capacity
    return node


class _NoConditions:
    """Neither the pods' nor the PodGroups' conditions are written (no API server)."""

    def set_unschedulable(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        return None

    def set(self, pg: NativePodGroup, status: str, reason: str, message: str) -> None:
        return None


async def measure(nodes: int, gangs: int, size: int, cprofile: str = "") -> tuple[float, str]:
    """CPU seconds per gang cycle, and a digest of (pod, node) for every member placed."""
    configure_logging("warning")
    gctune.tune()
    spec, registry = default_profile()
    cache, snapshot = Cache(), Snapshot()
    for i in range(nodes):
        cache.add_node(decode_node(_node(i)))
    services = _Services(snapshot)
    fwk = Framework(spec, registry, services)
    groups: Store[NativePodGroup] = Store()
    services.stores[NATIVE_POD_GROUPS.resource] = groups
    clock = FakeClock()
    queue = SchedulingQueue(
        fwk.less,
        clock,
        pre_enqueue=lambda pod: None,
        hints={spec.scheduler_name: fwk.enqueue_hints()},
    )
    pods: dict[str, Pod] = {}
    placed: list[tuple[str, str]] = []

    def to_binding(a: Assumed) -> None:
        placed.append((a.pod.name, a.node))
        pods[a.pod.key] = a.pod
        services.pods[:] = pods.values()

    def members(namespace: str, name: str) -> Sequence[Pod]:
        return [p for p in services.pods if p.scheduling_group == name]

    cycle = GroupCycle(
        frameworks={spec.scheduler_name: fwk},
        cache=cache,
        snapshot=snapshot,
        algorithm=Algorithm(0),
        take=queue.take,
        members=members,
        groups=lambda: groups,
        conditions=_NoConditions(),  # type: ignore[arg-type]
        outcomes=Outcomes(
            queue=queue,
            current_pod=pods.get,
            events=lambda profile: _NoEvents(),  # type: ignore[arg-type,return-value]
            conditions=_NoConditions(),
            clock=clock,
        ),
        skip=lambda pod: False,
        to_binding=to_binding,
    )
    cache.update_snapshot(snapshot)
    gctune.freeze_caches()
    profiler = cProfile.Profile() if cprofile else None
    spent = 0.0
    for g in range(gangs):
        name = f"gang-{g}"
        pg = make_native_pod_group(name, NAMESPACE).min_count(size).topology(RACK).obj()
        groups.upsert(pg.key, pg, "1")
        for j in range(size):
            i = g * size + j
            pod = make_pod(f"test-tas-scheduling-{i}", NAMESPACE).uid(f"u{i}")
            pod = pod.scheduling_group(name).cpu("100m").memory("100Mi")
            pods[f"{NAMESPACE}/test-tas-scheduling-{i}"] = pod.obj()
            queue.add(pod.obj())
        services.pods[:] = pods.values()
        first = await queue.pop()
        if profiler is not None:
            profiler.enable()
        start = time.process_time()
        await cycle.run(first)
        spent += time.process_time() - start
        if profiler is not None:
            profiler.disable()
    if profiler is not None:
        profiler.dump_stats(cprofile)
        calls = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
        print(f"cprofile={cprofile} calls_per_gang={calls / gangs:.0f}")
    digest = hashlib.sha256(repr(sorted(placed)).encode()).hexdigest()[:16]
    return spent / gangs, digest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--gangs", type=int, default=300)
    ap.add_argument("--gang-size", type=int, default=4)
    ap.add_argument("--cprofile", default="", help="write the cycles' cProfile stats here")
    args = ap.parse_args()
    per_gang, digest = anyio.run(measure, args.nodes, args.gangs, args.gang_size, args.cprofile)
    print(
        f"nodes={args.nodes} gangs={args.gangs} gang_size={args.gang_size} "
        f"cpu_ms_per_gang={per_gang * 1000:.2f} placements_digest={digest}"
    )


if __name__ == "__main__":
    main()
