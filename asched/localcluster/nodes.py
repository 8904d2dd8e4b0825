"""Fake nodes for kwok: describe them with NodeSpec, create them fast, wait until Ready.

A node is a plain API object whose ``status.capacity``/``allocatable`` the API server keeps
on create; kwok (which manages nodes annotated ``kwok.x-k8s.io/node: fake``) then adds the
Ready condition and heartbeats. Benchmarks create thousands, so creation runs a fixed pool
of workers over one keep-alive session instead of one task per node.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import anyio
import structlog

from asched.localcluster.binaries import KWOK_VERSION
from asched.localcluster.rest import ApiError, ClusterClient, JsonObject

log = structlog.get_logger()

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_LABEL = "type"
GPU_RESOURCE = "nvidia.com/gpu"
NODES_PATH = "/api/v1/nodes"

T = TypeVar("T")

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: TaintEffect = "NoSchedule"


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One fake node. Capacity equals allocatable (no system reservation)."""

    name: str
    cpu: str = "4"
    memory: str = "32Gi"
    pods: int = 110
    gpus: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Taint] = ()
    #: More allocatable resources, e.g. {"ephemeral-storage": "100Gi"}.
    extra: Mapping[str, str] = field(default_factory=dict)


def node_specs(
    count: int,
    *,
    prefix: str = "kwok-node-",
    cpu: str = "4",
    memory: str = "32Gi",
    pods: int = 110,
    gpu_nodes: int = 0,
    gpus_per_node: int = 8,
    labels: Mapping[str, str] | None = None,
) -> list[NodeSpec]:
    """*count* uniform nodes named prefix0000...; the last *gpu_nodes* of them carry GPUs."""
    if not 0 <= gpu_nodes <= count:
        raise ValueError(f"gpu_nodes must be within 0..{count}, got {gpu_nodes}")
    width = max(4, len(str(count - 1)))
    specs = []
    for i in range(count):
        gpu = i >= count - gpu_nodes
        node_labels = dict(labels or {})
        if gpu:
            node_labels["nvidia.com/gpu.present"] = "true"
        specs.append(
            NodeSpec(
                name=f"{prefix}{i:0{width}d}",
                cpu=cpu,
                memory=memory,
                pods=pods,
                gpus=gpus_per_node if gpu else 0,
                labels=node_labels,
            )
        )
    return specs


def build_node_manifest(spec: NodeSpec) -> JsonObject:
    """The Node object for *spec*, as kwok expects it."""
    resources = {"cpu": spec.cpu, "memory": spec.memory, "pods": str(spec.pods)}
    if spec.gpus:
        resources[GPU_RESOURCE] = str(spec.gpus)
    resources.update(spec.extra)
    labels = {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": spec.name,
        KWOK_LABEL: "kwok",
        **spec.labels,
    }
    node: JsonObject = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": labels,
            "annotations": {KWOK_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kubeletVersion": f"kwok-{KWOK_VERSION}",
                "kubeProxyVersion": f"kwok-{KWOK_VERSION}",
            },
            "phase": "Running",
        },
    }
    if spec.taints:
        node["spec"]["taints"] = [
            {"key": t.key, "value": t.value, "effect": t.effect} for t in spec.taints
        ]
    return node


async def _run_pool(
    items: Sequence[T], fn: Callable[[T], Awaitable[None]], concurrency: int
) -> None:
    """Run *fn* over *items* with *concurrency* workers (not one task per item)."""
    send, receive = anyio.create_memory_object_stream[T](len(items))
    async with send:
        for item in items:
            send.send_nowait(item)

    async def worker() -> None:
        async for item in receive:
            await fn(item)

    try:
        async with receive, anyio.create_task_group() as tg:
            for _ in range(max(1, min(concurrency, len(items)))):
                tg.start_soon(worker)
    except ExceptionGroup as group:
        # Callers want the API error, not a wrapper; the others are usually the same.
        raise _first_leaf(group) from group


def _first_leaf(group: ExceptionGroup[Exception]) -> Exception:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, ExceptionGroup) else first


async def create_nodes(
    client: ClusterClient, specs: Iterable[NodeSpec], *, concurrency: int = 32
) -> list[str]:
    """Create the nodes with at most *concurrency* requests in flight; return their names.

    A node that already exists is an error (ApiError 409), so two callers cannot silently
    share a name.
    """
    bodies = [build_node_manifest(s) for s in specs]

    async def create(body: JsonObject) -> None:
        await client.post(NODES_PATH, body)

    await _run_pool(bodies, create, concurrency)
    log.info("nodes_created", count=len(bodies))
    return [b["metadata"]["name"] for b in bodies]


def is_ready(node: JsonObject) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


async def wait_nodes_ready(client: ClusterClient, names: Iterable[str]) -> None:
    """Wait until every named node reports Ready=True.

    Lists once, then watches (relisting if the watch expires), so waiting for thousands of
    nodes costs the API server one list, not one list per poll. Waits for ever; callers
    bound it with ``anyio.fail_after``.
    """
    pending = set(names)
    selector = f"{KWOK_LABEL}=kwok"
    while pending:
        nodes, version = await client.list_with_version(
            NODES_PATH, params={"labelSelector": selector}
        )
        pending -= {n["metadata"]["name"] for n in nodes if is_ready(n)}
        if not pending:
            return
        log.debug("nodes_pending", count=len(pending), sample=sorted(pending)[:3])
        try:
            async with client.watch(
                NODES_PATH,
                resource_version=version,
                params={"labelSelector": selector, "timeoutSeconds": 60},
            ) as events:
                async for event in events:
                    node = event["object"]
                    if event["type"] in ("ADDED", "MODIFIED") and is_ready(node):
                        pending.discard(node["metadata"]["name"])
                        if not pending:
                            return
        except ApiError as err:
            if err.status != 410:  # Gone: our version expired; relist
                raise


async def delete_nodes(
    client: ClusterClient, names: Iterable[str], *, concurrency: int = 32
) -> None:
    """Delete the named nodes (missing ones are fine)."""

    async def delete(name: str) -> None:
        try:
            await client.delete(f"{NODES_PATH}/{name}")
        except ApiError as err:
            if err.status != 404:
                raise

    await _run_pool(list(names), delete, concurrency)
