"""The benchmark's inspector client reads server-sent events as the page does."""

from __future__ import annotations

import anyio
from aiohttp import web

from benchmarks.inspector_client import EVENTS_PATH, StreamStats, read_events


async def test_it_counts_the_events_it_streams() -> None:
    async def events(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i in range(3):
            await resp.write(b'data: {"n": %d}\n\n' % i)
        return resp  # the stream ends; the client reconnects after a pause

    app = web.Application()
    app.router.add_get(EVENTS_PATH, events)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    stats = StreamStats()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_events, f"http://127.0.0.1:{port}", stats)
            for _ in range(400):  # up to 4 s
                if stats.events >= 3:
                    break
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    finally:
        await runner.cleanup()
    assert stats.events >= 3
    assert stats.errors == 0
    assert stats.bytes > 0
