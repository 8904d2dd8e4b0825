"""Small async helpers for integration tests: polling and the Binding request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from asched.localcluster import ApiError, ClusterClient, JsonObject

T = TypeVar("T")


async def poll(check: Callable[[], Awaitable[T | None]], interval: float = 0.05) -> T:
    """Call *check* until it returns something other than None; bound it with fail_after."""
    while True:
        result = await check()
        if result is not None:
            return result
        await anyio.sleep(interval)


def pod_path(namespace: str, name: str = "") -> str:
    base = f"/api/v1/namespaces/{namespace}/pods"
    return f"{base}/{name}" if name else base


async def bind(client: ClusterClient, namespace: str, pod: str, node: str) -> JsonObject:
    """POST the pods/binding subresource, as a scheduler does."""
    return await client.post(
        f"{pod_path(namespace, pod)}/binding",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        },
    )


async def status_of(coro: Awaitable[object]) -> int:
    """HTTP status of a request: 200 if it succeeded, else the ApiError's status."""
    try:
        await coro
    except ApiError as err:
        return err.status
    return 200
