"""ClusterClient against a tiny local HTTP server: paging, errors, verbs and headers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web

from asched.localcluster.rest import MERGE_PATCH, ApiError, ClusterClient

seen: list[dict[str, Any]] = []


async def handler(request: web.Request) -> web.StreamResponse:
    seen.append(
        {
            "method": request.method,
            "path": request.path,
            "query": dict(request.query),
            "auth": request.headers.get("Authorization"),
            "type": request.headers.get("Content-Type"),
            "body": await request.read(),
        }
    )
    if request.path == "/api/v1/pods":
        page = int(request.query.get("continue", "0"))
        meta = {"continue": str(page + 1)} if page < 2 else {}
        items = [{"n": page * 10 + i} for i in range(2)]
        return web.json_response({"items": items, "metadata": meta})
    if request.path == "/api/v1/nodes" and request.query.get("watch") == "true":
        resp = web.StreamResponse()
        await resp.prepare(request)
        for name in ("a", "b"):
            event = {"type": "ADDED", "object": {"metadata": {"name": name}}}
            await resp.write(orjson.dumps(event) + b"\n")
        if request.query.get("resourceVersion") == "old":
            gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Gone"}}
            await resp.write(orjson.dumps(gone) + b"\n")
        await resp.write_eof()
        return resp
    if request.path == "/missing":
        body = {"kind": "Status", "reason": "NotFound", "message": 'pods "x" not found'}
        return web.json_response(body, status=404)
    return web.json_response({"ok": True})


@pytest.fixture
async def client() -> AsyncIterator[ClusterClient]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    seen.clear()
    try:
        async with ClusterClient(f"http://127.0.0.1:{port}", "tok") as c:
            yield c
    finally:
        await runner.cleanup()


async def test_list_follows_continue_tokens(client: ClusterClient) -> None:
    items = await client.list("/api/v1/pods", params={"labelSelector": "a=b"}, page_size=2)
    assert [i["n"] for i in items] == [0, 1, 10, 11, 20, 21]
    assert [s["query"].get("continue") for s in seen] == [None, "1", "2"]
    assert all(s["query"]["limit"] == "2" and s["query"]["labelSelector"] == "a=b" for s in seen)
    assert seen[0]["auth"] == "Bearer tok"


async def test_errors_carry_status_and_reason(client: ClusterClient) -> None:
    with pytest.raises(ApiError) as err:
        await client.get("/missing")
    assert err.value.status == 404
    assert err.value.reason == "NotFound"
    assert 'pods "x" not found' in str(err.value)
    assert await client.exists("/missing") is False
    assert await client.exists("/present") is True


async def test_verbs_send_json_bodies_and_bools_lowercase(client: ClusterClient) -> None:
    await client.post("/a", {"x": 1})
    await client.patch("/b", {"y": 2})
    await client.delete("/c", params={"gracePeriodSeconds": 0, "dryRun": True})
    assert [(s["method"], s["type"]) for s in seen] == [
        ("POST", "application/json"),
        ("PATCH", MERGE_PATCH),
        ("DELETE", None),
    ]
    assert orjson.loads(seen[0]["body"]) == {"x": 1}
    assert seen[2]["query"] == {"gracePeriodSeconds": "0", "dryRun": "true"}


async def test_use_outside_context_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="async with"):
        await ClusterClient("http://127.0.0.1:1", "t").get("/")


async def test_watch_yields_events_until_the_server_ends_it(client: ClusterClient) -> None:
    async with client.watch("/api/v1/nodes", resource_version="7") as events:
        names = [e["object"]["metadata"]["name"] async for e in events]
    assert names == ["a", "b"]
    assert seen[-1]["query"] == {"watch": "true", "resourceVersion": "7"}


async def test_watch_error_event_raises(client: ClusterClient) -> None:
    got: list[str] = []

    async def consume() -> None:
        async with client.watch("/api/v1/nodes", resource_version="old") as events:
            async for e in events:
                got.append(e["type"])

    with pytest.raises(ApiError) as err:
        await consume()
    assert got == ["ADDED", "ADDED"]
    assert err.value.status == 410
