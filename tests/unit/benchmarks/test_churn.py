"""The churn op cleans up what it may have created, even when cancelled mid-POST."""

from __future__ import annotations

from typing import Any, cast

import anyio

from asched.localcluster import ClusterClient
from benchmarks.churn import NODES_PATH, Churn


class _Admin:
    """Records POSTs and DELETEs; the POST of a pod never answers (the run is cancelled
    while it is in flight, after the API server may already have made the pod)."""

    def __init__(self) -> None:
        self.posted: list[str] = []
        self.deleted: list[str] = []
        self.pod_in_flight = anyio.Event()

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.posted.append(f"{path}/{body['metadata']['name']}")
        if path.endswith("/pods"):
            self.pod_in_flight.set()
            await anyio.sleep_forever()
        return body

    async def delete(self, path: str, params: dict[str, str] | None = None) -> None:
        self.deleted.append(path)


async def test_a_post_cancelled_in_flight_is_still_cleaned_up() -> None:
    admin = _Admin()
    churn = Churn(cast(ClusterClient, admin), "ns", "asched")
    async with anyio.create_task_group() as tg:
        tg.start_soon(churn.run)
        await admin.pod_in_flight.wait()
        tg.cancel_scope.cancel()
    node, pod = admin.posted
    assert node.startswith(f"{NODES_PATH}/churn-asched-")
    assert sorted(admin.deleted) == sorted([node, pod])


async def test_two_runs_never_reuse_a_name() -> None:
    first, second = _Admin(), _Admin()
    for admin in (first, second):
        churn = Churn(cast(ClusterClient, admin), "ns", "asched")
        async with anyio.create_task_group() as tg:
            tg.start_soon(churn.run)
            await admin.pod_in_flight.wait()
            tg.cancel_scope.cancel()
    assert first.posted[0] != second.posted[0]
