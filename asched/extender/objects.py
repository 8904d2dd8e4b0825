"""The API server's JSON of pods and nodes, kept for the extenders that are sent them.

An extender's ExtenderArgs carries the whole v1.Pod and, unless the extender is
nodeCacheCapable, whole v1.Nodes; asched decodes objects once into lean typed forms that
keep no more than scheduling needs, so the informers hand each object's JSON here too
(`keeping`), and the calls splice it into their requests unchanged. Kept only when
extenders are configured: it costs the JSON of every pod and node the informers hold.

A pod or node whose JSON was never seen (a test's object, or one that failed to decode)
goes out as the identity asched knows (name, namespace, uid, node name), which is what an
extender needs to look it up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from asched.api import Pod

T = TypeVar("T")


def _key(raw: dict[str, Any]) -> str:
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


class WireObjects:
    """Pods by `namespace/name`, nodes by name, as JSON bytes. Written by the informers'
    decoders and the delete handlers, read by the extender calls."""

    def __init__(self) -> None:
        self._pods: dict[str, bytes] = {}
        self._nodes: dict[str, bytes] = {}

    def keeping_pods(self, decode: Callable[[dict[str, Any]], T]) -> Callable[[dict[str, Any]], T]:
        """*decode*, also keeping each pod's JSON once it decoded."""
        return self._keeping(decode, self._pods)

    def keeping_nodes(self, decode: Callable[[dict[str, Any]], T]) -> Callable[[dict[str, Any]], T]:
        return self._keeping(decode, self._nodes)

    @staticmethod
    def _keeping(
        decode: Callable[[dict[str, Any]], T], into: dict[str, bytes]
    ) -> Callable[[dict[str, Any]], T]:
        def keep(raw: dict[str, Any]) -> T:
            obj = decode(raw)
            into[_key(raw)] = orjson.dumps(raw)
            return obj

        return keep

    def forget_pod(self, key: str) -> None:
        self._pods.pop(key, None)

    def forget_node(self, name: str) -> None:
        self._nodes.pop(name, None)

    def pod(self, pod: Pod) -> bytes:
        raw = self._pods.get(pod.key)
        if raw is not None:
            return raw
        return orjson.dumps(
            {
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                "spec": {"nodeName": pod.node_name} if pod.node_name else {},
            }
        )

    def node(self, name: str) -> bytes:
        raw = self._nodes.get(name)
        return raw if raw is not None else orjson.dumps({"metadata": {"name": name}})
