"""The benchmark scenarios of shared/perf.md: nodes, pods, and what a correct end is.

A Scenario is data: the kwok nodes to create, the pods (and PodGroups) to schedule, which
schedulers can run it, when a run is over, and a check of the placements it ended with.
Pods follow kube-scheduler's scheduler_perf templates (test/integration/scheduler_perf/
templates/pod-default.yaml, pod-with-topology-spreading.yaml, pod-with-pod-anti-affinity.yaml,
pod-with-node-affinity.yaml, pod-with-preferred-topology-spreading.yaml): 100m CPU / 500Mi
requests; spread pods with maxSkew 5 over topology.kubernetes.io/zone, required or
preferred; anti-affinity pods that repel each other per kubernetes.io/hostname; node
affinity pods that need zone1 or zone2. The churn scenario runs benchmarks/churn.py
beside the measured pods (SchedulingWithMixedChurn).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from asched.localcluster import JsonObject, NodeSpec, node_specs
from benchmarks.observer import Binding
from benchmarks.schedulers import REGION_LABEL, REGIONS, Kind
from benchmarks.workload import (
    NATIVE_GROUP_LABEL,
    POD_GROUP_LABEL,
    group_of,
    native_podgroup_manifest,
    pod_manifest,
    podgroup_manifest,
)

ZONE_LABEL = "topology.kubernetes.io/zone"
#: examples/policies' Location annotation ("<region>" or "<region>/<zone>").
LOCATION_ANNOTATION = "policies.asched.dev/location"
ZONES = ("zone-a", "zone-b", "zone-c")
SPREAD_MAX_SKEW = 5
BOTH = (Kind.KUBE, Kind.ASCHED)

#: Checks a run's final placements; returns named numbers (violations must be 0).
Verifier = Callable[[Mapping[str, Binding], Mapping[str, Mapping[str, str]]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Params:
    nodes: int = 1000
    pods: int = 5000
    gangs: int = 1000
    gang_size: int = 3
    oversubscribe: float = 1.5


@dataclass(frozen=True)
class Scenario:
    name: str
    nodes: list[NodeSpec]
    pods: list[JsonObject]
    podgroups: list[JsonObject] = field(default_factory=list)
    schedulers: tuple[Kind, ...] = BOTH
    gang: bool = False
    #: Native (scheduling.k8s.io) gangs: kube-scheduler runs with NATIVE_GANG_GATES.
    native_gang: bool = False
    #: How many pods a correct run binds; fewer than all when capacity is short.
    expected_bound: int = -1
    #: When set, a run also ends once nothing was bound for this many seconds.
    settle_seconds: float | None = None
    verify: Verifier | None = None
    describe: str = ""
    #: Recreate a node, a pod and a Service every second during the run (churn.py).
    churn: bool = False
    #: SIGKILL and restart kube-apiserver once this fraction of the pods is bound
    #: (recovery.py), and report how fast the scheduler recovers.
    restart_apiserver_at: float | None = None

    @property
    def bound_target(self) -> int:
        return len(self.pods) if self.expected_bound < 0 else self.expected_bound


def _names(prefix: str, count: int) -> list[str]:
    width = max(5, len(str(count - 1)))
    return [f"{prefix}-{i:0{width}d}" for i in range(count)]


def basic(p: Params) -> Scenario:
    return Scenario(
        name="basic",
        nodes=node_specs(p.nodes),
        pods=[pod_manifest(n) for n in _names("basic", p.pods)],
        describe=f"{p.nodes} nodes (4 CPU, 32Gi, 110 pods), {p.pods} pods of 100m/500Mi",
    )


def plugins(p: Params) -> Scenario:
    """basic's nodes and pods, for kube-scheduler and asched with the default profile and
    asched with the seed's six policies added (schedulers.policies_profile): what a user
    who writes plugins runs. Nodes carry a region and zone; pods ask for region-a
    (Location's annotation), which every policy accepts everywhere."""
    nodes = [
        NodeSpec(
            s.name,
            labels={REGION_LABEL: REGIONS[i % len(REGIONS)], ZONE_LABEL: ZONES[i % len(ZONES)]},
        )
        for i, s in enumerate(node_specs(p.nodes))
    ]
    pods = [pod_manifest(n) for n in _names("plugins", p.pods)]
    for pod in pods:
        pod["metadata"]["annotations"] = {LOCATION_ANNOTATION: REGIONS[0]}
    return Scenario(
        name="plugins",
        nodes=nodes,
        pods=pods,
        schedulers=(Kind.KUBE, Kind.ASCHED, Kind.ASCHED_PLUGINS),
        describe=(
            f"{p.nodes} nodes (4 CPU, 32Gi, 110 pods, 2 regions, 3 zones), {p.pods} pods of "
            "100m/500Mi; asched-plugins adds RegionFence, GPUDriver, StrongestCPU, "
            "CPUUtilization, GPUResource and Location to the default profile"
        ),
    )


def faults(p: Params) -> Scenario:
    """basic's nodes and pods, with kube-apiserver SIGKILLed and restarted on the same
    port once half the pods are bound, for both schedulers: the time from its readyz to
    the last bind, and the binds in the 10 s after it (benchmarks/recovery.py)."""
    return Scenario(
        name="faults",
        nodes=node_specs(p.nodes),
        pods=[pod_manifest(n) for n in _names("faults", p.pods)],
        restart_apiserver_at=0.5,
        describe=(
            f"{p.nodes} nodes (4 CPU, 32Gi, 110 pods), {p.pods} pods of 100m/500Mi; "
            "kube-apiserver SIGKILLed and restarted once half are bound"
        ),
    )


def zoned_nodes(count: int) -> list[NodeSpec]:
    return [
        NodeSpec(s.name, labels={ZONE_LABEL: ZONES[i % len(ZONES)]})
        for i, s in enumerate(node_specs(count))
    ]


def _spread_verifier(nodes: list[NodeSpec]) -> Verifier:
    zone_of = {n.name: n.labels[ZONE_LABEL] for n in nodes}

    def verify(
        bound: Mapping[str, Binding], labels: Mapping[str, Mapping[str, str]]
    ) -> dict[str, Any]:
        del labels
        per_zone = Counter(zone_of[b.node] for b in bound.values())
        counts = [per_zone.get(z, 0) for z in ZONES]
        skew = max(counts) - min(counts)
        return {"zone_counts": counts, "max_skew": skew, "violations": int(skew > SPREAD_MAX_SKEW)}

    return verify


def _zone_spread_pods(prefix: str, count: int, when: str) -> list[JsonObject]:
    constraint = {
        "maxSkew": SPREAD_MAX_SKEW,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return [
        pod_manifest(n, labels={"color": "blue"}, spec={"topologySpreadConstraints": [constraint]})
        for n in _names(prefix, count)
    ]


def spread(p: Params) -> Scenario:
    nodes = zoned_nodes(p.nodes)
    return Scenario(
        name="spread",
        nodes=nodes,
        pods=_zone_spread_pods("spread", p.pods, "DoNotSchedule"),
        verify=_spread_verifier(nodes),
        describe=f"{p.nodes} nodes in 3 zones, {p.pods} pods with a required zone spread "
        f"(maxSkew {SPREAD_MAX_SKEW})",
    )


def _verify_anti_affinity(
    bound: Mapping[str, Binding], labels: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    del labels
    per_node = Counter(b.node for b in bound.values())
    crowded = sum(1 for c in per_node.values() if c > 1)
    return {"nodes_used": len(per_node), "violations": crowded}


def anti_affinity(p: Params) -> Scenario:
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    pods = min(p.pods, p.nodes)
    return Scenario(
        name="antiaffinity",
        nodes=node_specs(p.nodes),
        pods=[
            pod_manifest(
                n,
                labels={"color": "green"},
                spec={
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [term]
                        }
                    }
                },
            )
            for n in _names("anti", pods)
        ],
        verify=_verify_anti_affinity,
        describe=f"{p.nodes} nodes, {pods} pods with required pod anti-affinity per hostname "
        "(at most one per node)",
    )


def _gang_pods(gangs: int, size: int, cpu: str) -> tuple[list[JsonObject], list[JsonObject]]:
    groups = _names("gang", gangs)
    pods = [
        pod_manifest(f"{g}-{m:02d}", cpu=cpu, memory="500Mi", labels={POD_GROUP_LABEL: g})
        for g in groups
        for m in range(size)
    ]
    return pods, [podgroup_manifest(g, size) for g in groups]


def gang_census(
    bound: Mapping[str, Binding], labels: Mapping[str, Mapping[str, str]], size: int
) -> dict[str, Any]:
    """Gangs by how many members are bound: complete, partial (the failure) and untouched."""
    members: defaultdict[str, int] = defaultdict(int)
    for name, pod_labels in labels.items():
        group = group_of(pod_labels)
        if group is not None:
            members[group] += int(name in bound)
    complete = sum(1 for n in members.values() if n >= size)
    partial = sum(1 for n in members.values() if 0 < n < size)
    return {
        "complete_gangs": complete,
        "partial_gangs": partial,
        "unbound_gangs": len(members) - complete - partial,
        "violations": partial,
    }


def gang(p: Params) -> Scenario:
    pods, groups = _gang_pods(p.gangs, p.gang_size, "100m")
    return Scenario(
        name="gang",
        nodes=node_specs(p.nodes),
        pods=pods,
        podgroups=groups,
        schedulers=(Kind.ASCHED,),
        gang=True,
        verify=lambda bound, labels: gang_census(bound, labels, p.gang_size),
        describe=f"{p.nodes} nodes, {p.gangs} gangs x {p.gang_size} pods (minMember "
        f"{p.gang_size}), 100m/500Mi each",
    )


GANG_NODE_CPU = 4  # whole CPUs; gang pods ask for 1, so a node holds 4 members


def _oversubscribed_shape(p: Params) -> tuple[int, int, int, int]:
    """(members, nodes, 1-CPU slots, gangs that can complete) for p.oversubscribe."""
    total = p.gangs * p.gang_size
    nodes = max(1, math.ceil(total / p.oversubscribe / GANG_NODE_CPU))
    slots = nodes * GANG_NODE_CPU
    return total, nodes, slots, slots // p.gang_size


def gang_oversubscribed(p: Params) -> Scenario:
    """Gangs asking for *oversubscribe* times the cluster's capacity.

    Members request 1 CPU on 4-CPU nodes, so any free slot fits any member and exactly
    floor(slots / size) gangs can complete; a correct scheduler completes that many,
    leaves every other gang with no member bound, and does not stall half-way.
    """
    total, nodes, slots, fits = _oversubscribed_shape(p)
    pods, groups = _gang_pods(p.gangs, p.gang_size, "1")
    return Scenario(
        name="gang-oversub",
        nodes=node_specs(nodes, cpu=str(GANG_NODE_CPU)),
        pods=pods,
        podgroups=groups,
        schedulers=(Kind.ASCHED,),
        gang=True,
        expected_bound=fits * p.gang_size,
        settle_seconds=30.0,
        verify=lambda bound, labels: gang_census(bound, labels, p.gang_size),
        describe=f"{nodes} nodes x {GANG_NODE_CPU} CPU ({slots} slots), {p.gangs} gangs x "
        f"{p.gang_size} pods of 1 CPU ({total / slots:.0%} of capacity); "
        f"{fits} gangs can complete",
    )


def _native_gang_pods(gangs: int, size: int, cpu: str) -> tuple[list[JsonObject], list[JsonObject]]:
    groups = _names("ngang", gangs)
    pods = [
        pod_manifest(
            f"{g}-{m:02d}",
            cpu=cpu,
            memory="500Mi",
            labels={NATIVE_GROUP_LABEL: g},
            spec={"schedulingGroup": {"podGroupName": g}},
        )
        for g in groups
        for m in range(size)
    ]
    return pods, [native_podgroup_manifest(g, size) for g in groups]


def native_gang(p: Params) -> Scenario:
    """Kubernetes 1.37's native gangs, both schedulers (scheduler_perf's gang shapes:
    1000 x 3 or 20 x 50 on 1000 nodes, 10 x 5000 on 5000)."""
    pods, groups = _native_gang_pods(p.gangs, p.gang_size, "100m")
    return Scenario(
        name="native-gang",
        nodes=node_specs(p.nodes),
        pods=pods,
        podgroups=groups,
        native_gang=True,
        verify=lambda bound, labels: gang_census(bound, labels, p.gang_size),
        describe=f"{p.nodes} nodes, {p.gangs} native gangs x {p.gang_size} pods (minCount "
        f"{p.gang_size}), 100m/500Mi each",
    )


def native_gang_oversubscribed(p: Params) -> Scenario:
    """gang_oversubscribed with native gangs, for both schedulers."""
    total, nodes, slots, fits = _oversubscribed_shape(p)
    pods, groups = _native_gang_pods(p.gangs, p.gang_size, "1")
    return Scenario(
        name="native-gang-oversub",
        nodes=node_specs(nodes, cpu=str(GANG_NODE_CPU)),
        pods=pods,
        podgroups=groups,
        native_gang=True,
        expected_bound=fits * p.gang_size,
        settle_seconds=30.0,
        verify=lambda bound, labels: gang_census(bound, labels, p.gang_size),
        describe=f"{nodes} nodes x {GANG_NODE_CPU} CPU ({slots} slots), {p.gangs} native "
        f"gangs x {p.gang_size} pods of 1 CPU ({total / slots:.0%} of capacity); "
        f"{fits} gangs can complete",
    )


AFFINITY_ZONES = ("zone1", "zone2", "zone3")


def node_affinity(p: Params) -> Scenario:
    """SchedulingNodeAffinity's pods. scheduler_perf labels every node zone1; here the
    nodes rotate over three zones, so Filter rejects a third of them and NodeAffinity's
    Filter does real work."""
    nodes = [
        NodeSpec(s.name, labels={ZONE_LABEL: AFFINITY_ZONES[i % len(AFFINITY_ZONES)]})
        for i, s in enumerate(node_specs(p.nodes))
    ]
    req = {"key": ZONE_LABEL, "operator": "In", "values": list(AFFINITY_ZONES[:2])}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [req]}]
            }
        }
    }
    allowed = {n.name for n in nodes if n.labels[ZONE_LABEL] in AFFINITY_ZONES[:2]}

    def verify(
        bound: Mapping[str, Binding], labels: Mapping[str, Mapping[str, str]]
    ) -> dict[str, Any]:
        del labels
        return {"violations": sum(1 for b in bound.values() if b.node not in allowed)}

    return Scenario(
        name="nodeaffinity",
        nodes=nodes,
        pods=[pod_manifest(n, spec={"affinity": affinity}) for n in _names("naff", p.pods)],
        verify=verify,
        describe=f"{p.nodes} nodes in zones zone1-3, {p.pods} pods with required node "
        "affinity to zone1 or zone2",
    )


def preferred_spread(p: Params) -> Scenario:
    nodes = zoned_nodes(p.nodes)
    check = _spread_verifier(nodes)

    def verify(
        bound: Mapping[str, Binding], labels: Mapping[str, Mapping[str, str]]
    ) -> dict[str, Any]:
        out = check(bound, labels)
        # ScheduleAnyway is a preference: a wider skew is reported, not a violation.
        out["skew_above_max"] = out.pop("violations")
        out["violations"] = 0
        return out

    return Scenario(
        name="preferred-spread",
        nodes=nodes,
        pods=_zone_spread_pods("pspread", p.pods, "ScheduleAnyway"),
        verify=verify,
        describe=f"{p.nodes} nodes in 3 zones, {p.pods} pods with a preferred zone spread "
        f"(ScheduleAnyway, maxSkew {SPREAD_MAX_SKEW})",
    )


def mixed_churn(p: Params) -> Scenario:
    return Scenario(
        name="churn",
        nodes=node_specs(p.nodes),
        pods=[pod_manifest(n) for n in _names("churn", p.pods)],
        churn=True,
        describe=f"{p.nodes} nodes, {p.pods} pods of 100m/500Mi while a node, a 9-CPU "
        "priority-10 pod and a Service are recreated every second",
    )


SCENARIOS: Mapping[str, Callable[[Params], Scenario]] = {
    "basic": basic,
    "plugins": plugins,
    "spread": spread,
    "preferred-spread": preferred_spread,
    "antiaffinity": anti_affinity,
    "nodeaffinity": node_affinity,
    "churn": mixed_churn,
    "faults": faults,
    "gang": gang,
    "gang-oversub": gang_oversubscribed,
    "native-gang": native_gang,
    "native-gang-oversub": native_gang_oversubscribed,
}
