"""One read of the cluster for a dry run: nodes, pods, and what plugins asked to watch.

Each collection is listed once, in pages, and decoded with the same decoders the
informers use, so the dry run sees the objects exactly as the scheduler would. Unlike an
informer nothing is watched afterwards: the result is a picture of one moment. An object
that does not decode is left out and named in `skipped`, as the informers skip it too; an
optional resource whose API is not installed (404) lists as empty, as in the informers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from asched.api import DecodeError, Node, Pod, decode_node, decode_pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.client.pager import list_pages
from asched.client.protocol import ApiError, KubeClient
from asched.framework.listers import InformerRequest
from asched.informers import Store, meta_key
from asched.informers.informer import NODES_PATH, NON_TERMINAL_PODS, PODS_PATH

T = TypeVar("T")


@dataclass(slots=True)
class ClusterView:
    nodes: list[Node] = field(default_factory=list)
    # Pods that have not finished (what the scheduler's pod informer holds).
    pods: list[Pod] = field(default_factory=list)
    # "<key>: <field>: <message>" for every object left out because it did not decode.
    skipped: list[str] = field(default_factory=list)


async def list_decoded(
    client: KubeClient,
    path: str,
    decode: Callable[[dict[str, Any]], T],
    params: Mapping[str, str] | None = None,
    *,
    optional: bool = False,
) -> tuple[list[tuple[str, T, str]], list[str]]:
    """(key, object, resourceVersion) per decodable item, and the skipped items."""
    items: list[tuple[str, T, str]] = []
    skipped: list[str] = []
    try:
        async for page in list_pages(client, path, params):
            if page.restarted:
                items.clear()
                skipped.clear()
            for raw in page.items:
                key = meta_key(raw)
                try:
                    obj = decode(raw)
                except DecodeError as err:
                    skipped.append(f"{key}: {err.field}: {err.message}")
                    continue
                rv = str((raw.get("metadata") or {}).get("resourceVersion") or "")
                items.append((key, obj, rv))
    except ApiError as err:
        if not (optional and err.not_found):
            raise
    return items, skipped


async def load_view(client: KubeClient) -> ClusterView:
    nodes, skipped_nodes = await list_decoded(client, NODES_PATH, decode_node)
    pods, skipped_pods = await list_decoded(
        client, PODS_PATH, decode_pod, {"fieldSelector": NON_TERMINAL_PODS}
    )
    return ClusterView(
        nodes=[n for _, n, _ in nodes],
        pods=[p for _, p, _ in pods],
        skipped=[f"Node {s}" for s in skipped_nodes] + [f"Pod {s}" for s in skipped_pods],
    )


async def fill_store(
    client: KubeClient, request: InformerRequest[Any], store: Store[Any]
) -> list[str]:
    """List *request*'s resource once into *store*; return what was skipped."""
    items, skipped = await list_decoded(
        client, request.list_path, request.decode, optional=request.optional
    )
    for key, obj, rv in items:
        store.upsert(key, obj, rv)
    store.mark_synced()
    return [f"{request.resource} {s}" for s in skipped]


def build_snapshot(
    nodes: Sequence[Node], pods: Sequence[Pod], *, exclude_uid: str = ""
) -> Snapshot:
    """The snapshot a scheduling cycle would see: nodes with their assigned pods.

    The pod being explained (*exclude_uid*) is left out, so a pod already bound is
    explained as if it were still pending.
    """
    cache = Cache()
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        if pod.node_name and pod.uid != exclude_uid:
            cache.add_pod(pod)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot
