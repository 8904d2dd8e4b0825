"""Cluster-scoped objects the scenarios and the preemption test refer to by name.

PriorityClasses: the API server's Priority admission resolves `priorityClassName` into
`spec.priority` (and rejects pods that set `spec.priority` themselves), so scenarios name
classes; the schedulers only read the resolved number. A RuntimeClass with a fixed pod
overhead: RuntimeClass admission fills `spec.overhead` from it and rejects pods that set
an overhead of their own. DRA DeviceClasses. Created once per cluster; an existing object is fine.
"""

from __future__ import annotations

from typing import Any

from asched.localcluster import ApiError, ClusterClient

LOW, MID, HIGH, HIGH_NEVER = "low", "mid", "high", "high-never"
OVERHEAD_RUNTIME = "diff-overhead"

PRIORITY_CLASSES: tuple[dict[str, Any], ...] = (
    {"metadata": {"name": LOW}, "value": 10},
    {"metadata": {"name": MID}, "value": 100},
    {"metadata": {"name": HIGH}, "value": 1000},
    {"metadata": {"name": HIGH_NEVER}, "value": 1000, "preemptionPolicy": "Never"},
)

RUNTIME_CLASS: dict[str, Any] = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": OVERHEAD_RUNTIME},
    "handler": "runc",
    "overhead": {"podFixed": {"cpu": "1", "memory": "64Mi"}},
}

#: DRA DeviceClasses the scenarios' claims name (cluster-scoped, so shared by every
#: scenario; the devices are the scenarios' own ResourceSlices).
GPU_DRIVER = "gpu.example.com"
DEVICE_CLASSES: tuple[dict[str, Any], ...] = (
    {
        "metadata": {"name": "diff-gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]},
    },
    {
        "metadata": {"name": "diff-gpu-h100"},
        "spec": {
            "selectors": [
                {"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}},
                {"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].model == "h100"'}},
            ]
        },
    },
)


async def _create(admin: ClusterClient, path: str, body: dict[str, Any]) -> None:
    try:
        await admin.post(path, body)
    except ApiError as err:
        if err.status != 409:
            raise


async def ensure_cluster_objects(admin: ClusterClient) -> None:
    for pc in PRIORITY_CLASSES:
        body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", **pc}
        await _create(admin, "/apis/scheduling.k8s.io/v1/priorityclasses", body)
    await _create(admin, "/apis/node.k8s.io/v1/runtimeclasses", RUNTIME_CLASS)
    for dc in DEVICE_CLASSES:
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", **dc}
        await _create(admin, "/apis/resource.k8s.io/v1/deviceclasses", body)
