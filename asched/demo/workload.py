"""What the demo asks the schedulers to place, and what each pod is there to show.

Two schedulers share the cluster (see runner.py): ``custom-scheduler`` runs the seed
article's configuration verbatim, ``gang-scheduler`` runs kube-scheduler's default plugins
plus Coscheduling. The pods:
- the seed article's ``gpu-pod``, verbatim (nodeSelector ``node-type: gpu``);
- ordinary pods for each scheduler, one with zone affinity and one tolerating the infra
  taint;
- a gang: a PodGroup with minMember 3 and its three members (all placed, or none);
- a native gang (Kubernetes 1.37's scheduling.k8s.io/v1beta1 PodGroup): eight members
  with minCount 8 and a rack topology constraint, placed inside one rack or not at all;
- a StatefulSet ``db`` of three replicas, each with a volumeClaimTemplate of a
  WaitForFirstConsumer class backed by local PVs, one PV per zone (pinned to one node of
  that zone) and a zone spread constraint: VolumeBinding picks each replica's PV, so the
  replicas land one per zone, on the PVs' nodes;
- ``big-pod``, which asks for more CPU than any node has and must stay pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from asched.api.podgroup import API_VERSION as PODGROUP_API_VERSION
from asched.api.podgroup import POD_GROUP_LABEL
from asched.api.workload import API_VERSION as NATIVE_API_VERSION
from asched.demo.topology import GPU_LABEL, INFRA_LABEL, INFRA_TAINT, RACK, ZONE, demo_nodes
from asched.localcluster import NodeSpec

NAMESPACE = "demo"
SEED_SCHEDULER = "custom-scheduler"
GANG_SCHEDULER = "gang-scheduler"
GANG = "demo-gang"
GANG_SIZE = 3
NATIVE_GANG = "demo-ring"
NATIVE_GANG_SIZE = 8
PAUSE = "registry.k8s.io/pause:3.10"
BIG_POD_CPUS = "64"
STATEFUL_SET = "db"
STATEFUL_REPLICAS = 3
LOCAL_CLASS = "demo-local"
HOSTNAME = "kubernetes.io/hostname"

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class DemoPod:
    name: str
    scheduler: str
    # None for a pod its controller creates (the StatefulSet's replicas).
    manifest: JsonObject | None
    # What the pod demonstrates; the report's "why" for a pod that was placed.
    shows: str
    # Expected to stay pending: the demo waits for its FailedScheduling event instead.
    expect_pending: bool = False


@dataclass(frozen=True, slots=True)
class Workload:
    namespace: str
    pod_groups: list[JsonObject] = field(default_factory=list)
    pods: list[DemoPod] = field(default_factory=list)
    # (collection path, manifest), created after the PodGroups and before the pods.
    objects: list[tuple[str, JsonObject]] = field(default_factory=list)

    def pod(self, name: str) -> DemoPod:
        return next(p for p in self.pods if p.name == name)


def _pod(
    name: str,
    scheduler: str,
    cpu: str,
    memory: str,
    *,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> JsonObject:
    container = {
        "name": "main",
        "image": PAUSE,
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/part-of": "asched-demo", **(labels or {})},
        },
        "spec": {"schedulerName": scheduler, "containers": [container], **spec},
    }


# The seed article's pod, exactly as the article writes it.
SEED_GPU_POD: JsonObject = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "gpu-pod"},
    "spec": {
        "schedulerName": "custom-scheduler",
        "containers": [{"name": "gpu-container", "image": "nginx"}],
        "nodeSelector": {"node-type": "gpu"},
    },
}


def _local_pv(node: str, zone: str) -> JsonObject:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"demo-local-{zone}", "labels": {ZONE: zone}},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": LOCAL_CLASS,
            "persistentVolumeReclaimPolicy": "Retain",
            "local": {"path": f"/mnt/disks/{zone}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": HOSTNAME, "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                }
            },
        },
    }


def storage_objects(nodes: Sequence[NodeSpec], namespace: str) -> list[tuple[str, JsonObject]]:
    """The local StorageClass, one PV per zone on that zone's first untainted node, and
    the StatefulSet whose replicas claim them."""
    first_in_zone: dict[str, str] = {}
    for n in nodes:
        if not n.taints:
            first_in_zone.setdefault(n.labels[ZONE], n.name)
    app = {"app": STATEFUL_SET}
    template = _pod(STATEFUL_SET, GANG_SCHEDULER, "100m", "128Mi", labels=app)
    template["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    template["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": app},
        }
    ]
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": STATEFUL_SET},
        "spec": {
            "replicas": STATEFUL_REPLICAS,
            "serviceName": STATEFUL_SET,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": app},
            "template": {"metadata": template["metadata"], "spec": template["spec"]},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": LOCAL_CLASS,
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": LOCAL_CLASS},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    return [
        ("/apis/storage.k8s.io/v1/storageclasses", storage_class),
        *(
            ("/api/v1/persistentvolumes", _local_pv(node, zone))
            for zone, node in sorted(first_in_zone.items())
        ),
        (f"/apis/apps/v1/namespaces/{namespace}/statefulsets", sts),
    ]


def demo_workload(nodes: Sequence[NodeSpec] | None = None) -> Workload:
    """The workload for the demo's cluster of `nodes` (default: demo_nodes())."""
    nodes = demo_nodes() if nodes is None else nodes
    pods = [
        DemoPod(
            "gpu-pod",
            SEED_SCHEDULER,
            SEED_GPU_POD,
            "the seed article's pod: nodeSelector node-type=gpu",
        ),
        *(
            DemoPod(
                f"web-{i}",
                SEED_SCHEDULER,
                _pod(f"web-{i}", SEED_SCHEDULER, "100m", "128Mi"),
                f"no selector: NodeAffinity args {GPU_LABEL[0]}={GPU_LABEL[1]} pick GPU nodes",
            )
            for i in (1, 2)
        ),
        *(
            DemoPod(
                f"app-{i}",
                GANG_SCHEDULER,
                _pod(f"app-{i}", GANG_SCHEDULER, "500m", "512Mi"),
                "default plugins: the least allocated node wins",
            )
            for i in (1, 2, 3)
        ),
        DemoPod(
            "zonal",
            GANG_SCHEDULER,
            _pod(
                "zonal",
                GANG_SCHEDULER,
                "250m",
                "256Mi",
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": ZONE, "operator": "In", "values": ["zone-2a"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
            ),
            "required node affinity: zone-2a only",
        ),
        DemoPod(
            "infra-agent",
            GANG_SCHEDULER,
            _pod(
                "infra-agent",
                GANG_SCHEDULER,
                "100m",
                "64Mi",
                nodeSelector={INFRA_LABEL[0]: INFRA_LABEL[1]},
                tolerations=[
                    {
                        "key": INFRA_TAINT.key,
                        "operator": "Equal",
                        "value": INFRA_TAINT.value,
                        "effect": INFRA_TAINT.effect,
                    }
                ],
            ),
            f"tolerates {INFRA_TAINT.key}={INFRA_TAINT.value}:{INFRA_TAINT.effect}",
        ),
        *(
            DemoPod(
                f"train-{i}",
                GANG_SCHEDULER,
                _pod(f"train-{i}", GANG_SCHEDULER, "1", "1Gi", labels={POD_GROUP_LABEL: GANG}),
                f"gang {GANG} (minMember {GANG_SIZE}): all members or none",
            )
            for i in range(1, GANG_SIZE + 1)
        ),
        *(
            DemoPod(
                f"ring-{i}",
                GANG_SCHEDULER,
                _pod(
                    f"ring-{i}",
                    GANG_SCHEDULER,
                    "250m",
                    "256Mi",
                    schedulingGroup={"podGroupName": NATIVE_GANG},
                ),
                f"native gang {NATIVE_GANG} (minCount {NATIVE_GANG_SIZE}): one rack, all or none",
            )
            for i in range(1, NATIVE_GANG_SIZE + 1)
        ),
        *(
            DemoPod(
                f"{STATEFUL_SET}-{i}",
                GANG_SCHEDULER,
                None,
                "StatefulSet replica: its claim binds a local PV of its zone (VolumeBinding)",
            )
            for i in range(STATEFUL_REPLICAS)
        ),
        DemoPod(
            "big-pod",
            GANG_SCHEDULER,
            _pod("big-pod", GANG_SCHEDULER, BIG_POD_CPUS, "1Gi"),
            f"asks for {BIG_POD_CPUS} CPUs: more than any node has",
            expect_pending=True,
        ),
    ]
    group = {
        "apiVersion": PODGROUP_API_VERSION,
        "kind": "PodGroup",
        "metadata": {"name": GANG},
        "spec": {"minMember": GANG_SIZE},
    }
    native = {
        "apiVersion": NATIVE_API_VERSION,
        "kind": "PodGroup",
        "metadata": {"name": NATIVE_GANG},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": NATIVE_GANG_SIZE}},
            "schedulingConstraints": {"topology": [{"key": RACK}]},
        },
    }
    return Workload(NAMESPACE, [group, native], pods, storage_objects(nodes, NAMESPACE))
