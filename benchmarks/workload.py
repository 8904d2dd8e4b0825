"""The objects a benchmark run creates: pods, PodGroups, a namespace; and their clean-up.

Pods are built as raw manifests (what a user or controller would POST) and created by a
fixed pool of workers over one keep-alive session, before any scheduler runs, so creation
speed never limits scheduling. Each creation time is taken on the client when the POST
returns: creationTimestamp has one-second resolution, too coarse for latencies.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import structlog

from asched.localcluster import ApiError, ClusterClient, JsonObject

log = structlog.get_logger(__name__)

T = TypeVar("T")

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
DELETE_POLLS = 600  # half a second each
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
# Kubernetes 1.37's native PodGroups; their members also carry this label, so the gang
# census reads both kinds the same way.
NATIVE_PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
NATIVE_GROUP_LABEL = "bench.asched.dev/native-group"


def pods_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


def pod_manifest(
    name: str,
    *,
    cpu: str = "100m",
    memory: str = "500Mi",
    labels: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
) -> JsonObject:
    """A pause pod with requests = limits, as scheduler_perf's pod-default.yaml.

    schedulerName is left out: the runner sets it per scheduler.
    """
    resources = {"cpu": cpu, "memory": memory}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
            # Pods that nothing will run: do not wait for a kubelet on delete.
            "terminationGracePeriodSeconds": 0,
            **(spec or {}),
        },
    }


def native_podgroup_manifest(name: str, min_count: int) -> JsonObject:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def group_of(labels: Mapping[str, str]) -> str | None:
    """The gang a benchmark pod belongs to, whichever API it uses."""
    return labels.get(POD_GROUP_LABEL) or labels.get(NATIVE_GROUP_LABEL)


def podgroup_manifest(name: str, min_member: int) -> JsonObject:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": min_member},
    }


async def run_pool(items: Sequence[T], fn: Callable[[T], Awaitable[None]], workers: int) -> None:
    """Run *fn* over *items* with a fixed number of workers (not one task per item)."""
    send, receive = anyio.create_memory_object_stream[T](len(items))
    async with send:
        for item in items:
            send.send_nowait(item)

    async def worker() -> None:
        async for item in receive:
            await fn(item)

    async with receive, anyio.create_task_group() as tg:
        for _ in range(max(1, min(workers, len(items)))):
            tg.start_soon(worker)


async def create_namespace(client: ClusterClient, name: str) -> None:
    await client.post("/api/v1/namespaces", {"metadata": {"name": name}})


async def create_podgroups(
    client: ClusterClient, namespace: str, groups: Sequence[JsonObject], workers: int = 32
) -> None:
    async def create(group: JsonObject) -> None:
        native = group["apiVersion"].startswith("scheduling.k8s.io/")
        await client.post((NATIVE_PODGROUPS if native else PODGROUPS).format(ns=namespace), group)

    await run_pool(groups, create, workers)


@dataclass(frozen=True, slots=True)
class CreatedPod:
    uid: str
    at: float  # wall time the POST returned


async def create_pods(
    client: ClusterClient,
    namespace: str,
    pods: Sequence[JsonObject],
    scheduler_name: str,
    workers: int = 48,
) -> dict[str, CreatedPod]:
    """Create *pods* for *scheduler_name*; return each pod's uid and creation wall time."""
    created: dict[str, CreatedPod] = {}
    path = pods_path(namespace)

    async def create(pod: JsonObject) -> None:
        body = {**pod, "spec": {**pod["spec"], "schedulerName": scheduler_name}}
        answer = await client.post(path, body)
        created[pod["metadata"]["name"]] = CreatedPod(answer["metadata"]["uid"], time.time())

    began = time.monotonic()
    await run_pool(pods, create, workers)
    seconds = time.monotonic() - began
    log.info(
        "pods_created",
        count=len(created),
        seconds=round(seconds, 1),
        per_second=round(len(created) / seconds) if seconds > 0 else None,
    )
    return created


async def count_pods(client: ClusterClient, namespace: str) -> int:
    page = await client.get(pods_path(namespace), params={"limit": 1})
    remaining = (page.get("metadata") or {}).get("remainingItemCount") or 0
    return len(page.get("items") or []) + int(remaining)


async def delete_namespace_contents(
    client: ClusterClient, namespace: str, pods: Sequence[str], workers: int = 64
) -> None:
    """Force-delete *pods* and every PodGroup of *namespace*, wait until no pod is left,
    then delete the namespace (without waiting: its controller takes seconds and nothing
    is left in it).

    Pods are deleted one request each from a pool of workers: kube-apiserver's
    deletecollection runs with one worker by default and took minutes for 5000 pods.
    """
    path = pods_path(namespace)

    async def delete(name: str) -> None:
        # gracePeriodSeconds=0 removes a bound pod at once; kwok has nothing to finish.
        try:
            await client.delete(f"{path}/{name}", params={"gracePeriodSeconds": 0})
        except ApiError as err:
            if err.status != 404:
                raise

    await run_pool(pods, delete, workers)
    for leftovers in (
        path,
        PODGROUPS.format(ns=namespace),
        NATIVE_PODGROUPS.format(ns=namespace),
    ):
        try:
            await client.delete(leftovers, params={"gracePeriodSeconds": 0})
        except ApiError as err:
            # 404: no PodGroup API; 504: a slow deletecollection, which goes on anyway.
            if err.status not in (404, 504):
                raise
    for _ in range(DELETE_POLLS):
        if not await count_pods(client, namespace):
            break
        await anyio.sleep(0.5)
    else:
        raise TimeoutError(f"pods of {namespace} still exist after {DELETE_POLLS / 2:.0f}s")
    await client.delete(f"/api/v1/namespaces/{namespace}")
