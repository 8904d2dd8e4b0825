"""The demo's nodes: a small, mixed cluster where every scheduling rule has something to do.

- one infra node tainted ``dedicated=infra:NoSchedule`` (only tolerating pods go there);
- two GPU nodes labelled ``node-type=gpu`` with ``nvidia.com/gpu`` (the seed article's
  NodeAffinity args send custom-scheduler's pods there);
- the rest are plain nodes of 2, 4, 8 and 16 CPUs in turn;
- zones and regions round-robin: zone-1a and zone-1b in region-1, zone-2a in region-2;
- racks alternate, rack-1 and rack-2 (the native gang must fit inside one).
"""

from __future__ import annotations

from asched.localcluster import NodeSpec, Taint

MIN_NODES = 4
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
RACK = "topology.kubernetes.io/rack"
RACKS = ("rack-1", "rack-2")
ZONES = (("zone-1a", "region-1"), ("zone-1b", "region-1"), ("zone-2a", "region-2"))
PLAIN_CPUS = (2, 4, 8, 16)
GPU_CPUS = 16
INFRA_CPUS = 8
GPUS_PER_NODE = 4
GIB_PER_CPU = 4
INFRA_TAINT = Taint("dedicated", "infra", "NoSchedule")
INFRA_LABEL = ("node-role", "infra")
GPU_LABEL = ("node-type", "gpu")


def demo_nodes(count: int = 8) -> list[NodeSpec]:
    """*count* nodes (at least MIN_NODES): infra-1, node-1..node-<count-3>, gpu-1, gpu-2."""
    if count < MIN_NODES:
        raise ValueError(f"the demo needs at least {MIN_NODES} nodes, got {count}")
    kinds = ["infra"] + ["plain"] * (count - 3) + ["gpu", "gpu"]
    seen: dict[str, int] = {}
    specs = []
    for i, kind in enumerate(kinds):
        seen[kind] = seen.get(kind, 0) + 1
        n = seen[kind]
        zone, region = ZONES[i % len(ZONES)]
        labels = {ZONE: zone, REGION: region, RACK: RACKS[i % len(RACKS)]}
        if kind == "infra":
            cpus, name = INFRA_CPUS, f"infra-{n}"
            labels[INFRA_LABEL[0]] = INFRA_LABEL[1]
        elif kind == "gpu":
            cpus, name = GPU_CPUS, f"gpu-{n}"
            labels[GPU_LABEL[0]] = GPU_LABEL[1]
        else:
            cpus, name = PLAIN_CPUS[(n - 1) % len(PLAIN_CPUS)], f"node-{n}"
        specs.append(
            NodeSpec(
                name=name,
                cpu=str(cpus),
                memory=f"{cpus * GIB_PER_CPU}Gi",
                gpus=GPUS_PER_NODE if kind == "gpu" else 0,
                labels=labels,
                taints=(INFRA_TAINT,) if kind == "infra" else (),
            )
        )
    return specs
