"""The inspector's routes on a real OpsServer over a real (unsynced, in-memory) Scheduler."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
import anyio
import anyio.lowlevel
import orjson

from asched.app import scheduler_options
from asched.config import default_config
from asched.inspector import Broadcaster, Collector, Inspector, routes
from asched.metrics import Metrics
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from asched.server.gate import UNAUTHORIZED, Refusal
from asched.server.ops import OpsServer
from asched.testing import FakeClient
from tests.builders import make_node, make_pod


class TokenGate:
    """Admits `Bearer good` only, answering as the delegated gate does otherwise."""

    async def admit(
        self, method: str, path: str, authorization: str | None, client_user: object = None
    ) -> Refusal | None:
        return None if authorization == "Bearer good" else UNAUTHORIZED


def _inspector() -> Inspector:
    registry = in_tree_registry()
    sched = Scheduler(FakeClient(), registry, scheduler_options(default_config(registry)))
    sched.cache.add_node(
        make_node("n1").label("topology.kubernetes.io/zone", "z1").capacity(cpu="4").obj()
    )
    sched.cache.add_pod(make_pod("running").cpu("1").node("n1").obj())
    sched.queue.add(make_pod("waiting").obj())
    return Inspector(sched.view(), Collector(), Broadcaster())


@asynccontextmanager
async def _served(inspector: Inspector) -> AsyncIterator[str]:
    async def explain(ns: str, name: str) -> dict[str, object]:
        if name == "missing":
            raise LookupError(f"pod {ns}/{name} not found")
        return {"pod": f"{ns}/{name}"}

    server = OpsServer(
        Metrics(), host="127.0.0.1", port=0, gate=TokenGate(), routes=routes(inspector, explain)
    )
    async with server:
        yield server.url


async def test_the_page_and_api_need_a_credential() -> None:
    good = {"Authorization": "Bearer good"}
    async with _served(_inspector()) as url, aiohttp.ClientSession() as http:
        for path in ("/inspector/", "/inspector/api/snapshot", "/inspector/static/app.js"):
            async with http.get(url + path) as resp:
                assert resp.status == 401, path
            async with http.get(url + path, headers=good) as resp:
                assert resp.status == 200, path
        async with http.get(url + "/inspector/", headers=good) as resp:
            assert "asched inspector" in await resp.text()
        async with http.get(url + "/inspector/static/evil.js", headers=good) as resp:
            assert resp.status == 404


async def test_the_snapshot_holds_queues_pending_pods_and_nodes_by_zone() -> None:
    inspector = _inspector()
    inspector.tick()
    async with _served(inspector) as url, aiohttp.ClientSession() as http:
        async with http.get(
            url + "/inspector/api/snapshot", headers={"Authorization": "Bearer good"}
        ) as resp:
            snap = orjson.loads(await resp.read())
        async with http.get(
            url + "/inspector/api/explain?pod=default/missing",
            headers={"Authorization": "Bearer good"},
        ) as resp:
            assert resp.status == 404
    assert snap["queues"]["names"] == ["active", "backoff", "unschedulable", "gated"]
    assert snap["queues"]["samples"][-1][1:] == [1, 0, 0, 0]
    assert [p["pod"] for p in snap["pending"]] == ["default/waiting"]
    assert snap["pending"][0]["queue"] == "active"
    assert snap["nodes"] == [
        {"name": "n1", "zone": "z1", "cpu": 0.25, "memory": 0.0, "gpu": None, "pods": 1}
    ]


async def test_events_stream_snapshots_and_a_stalled_client_never_blocks_publishing() -> None:
    inspector = _inspector()
    async with _served(inspector) as url:
        host, port = url.removeprefix("http://").split(":")
        # A client that sends its request and then never reads a byte.
        stalled = await anyio.connect_tcp(host, int(port))
        await stalled.send(
            b"GET /inspector/api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\n\r\n"
        )
        async with (
            aiohttp.ClientSession() as http,
            http.get(
                url + "/inspector/api/events", headers={"Authorization": "Bearer good"}
            ) as resp,
        ):
            assert resp.headers["Content-Type"] == "text/event-stream"
            first = await resp.content.readline()
            assert first.startswith(b"data: {")
            with anyio.fail_after(5):
                for _ in range(300):  # ~300 snapshots the stalled client never reads
                    inspector.broadcaster.publish(b"{" + b"x" * 100_000 + b"}")
                    await anyio.lowlevel.checkpoint()
            assert inspector.broadcaster.clients == 2
        await stalled.aclose()
