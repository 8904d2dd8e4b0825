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
- ``big-pod``, which asks for more CPU than any node has and must stay pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.api.podgroup import API_VERSION as PODGROUP_API_VERSION
from asched.api.podgroup import POD_GROUP_LABEL
from asched.api.workload import API_VERSION as NATIVE_API_VERSION
from asched.demo.topology import GPU_LABEL, INFRA_LABEL, INFRA_TAINT, RACK, ZONE

NAMESPACE = "demo"
SEED_SCHEDULER = "custom-scheduler"
GANG_SCHEDULER = "gang-scheduler"
GANG = "demo-gang"
GANG_SIZE = 3
NATIVE_GANG = "demo-ring"
NATIVE_GANG_SIZE = 8
PAUSE = "registry.k8s.io/pause:3.10"
BIG_POD_CPUS = "64"

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class DemoPod:
    name: str
    scheduler: str
    manifest: JsonObject
    # What the pod demonstrates; the report's "why" for a pod that was placed.
    shows: str
    # Expected to stay pending: the demo waits for its FailedScheduling event instead.
    expect_pending: bool = False


@dataclass(frozen=True, slots=True)
class Workload:
    namespace: str
    pod_groups: list[JsonObject] = field(default_factory=list)
    pods: list[DemoPod] = field(default_factory=list)

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


def demo_workload() -> Workload:
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
    return Workload(NAMESPACE, [group, native], pods)
