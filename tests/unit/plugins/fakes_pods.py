"""Test doubles for plugins that look at other pods (PodTopologySpread, InterPodAffinity).

`cluster()` builds NodeInfos from nodes and assigned pods; `StoreHandle` is the shared
FakeHandle plus in-memory object stores for the informers a plugin asks for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from asched.api import Node, Pod
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from tests.unit.plugins.fakes import FakeHandle


def cluster(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> list[NodeInfo]:
    """One NodeInfo per node, with every pod added to the node named by its nodeName."""
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in pods:
        infos[p.node_name].add_pod(p)
    return list(infos.values())


class FakeStore:
    """An ObjectStore over a fixed list, keyed `namespace/name` (or `name`)."""

    def __init__(self, objects: Iterable[Any] = ()) -> None:
        self._objects = {self._key(o): o for o in objects}

    @staticmethod
    def _key(obj: Any) -> str:
        ns = getattr(obj, "namespace", "")
        return f"{ns}/{obj.name}" if ns else str(obj.name)

    def get(self, key: str) -> Any | None:
        return self._objects.get(key)

    def list(self) -> Sequence[Any]:
        return list(self._objects.values())

    def has_synced(self) -> bool:
        return True


class StoreHandle(FakeHandle):
    """FakeHandle whose `store()` serves fixed objects per InformerRequest.resource."""

    def __init__(
        self,
        node_infos: Sequence[NodeInfo] = (),
        stores: dict[str, Iterable[Any]] | None = None,
    ) -> None:
        super().__init__(node_infos)
        self._stores = {k: FakeStore(v) for k, v in (stores or {}).items()}

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        return self._stores.get(request.resource, FakeStore())
