"""A browser's worth of inspector traffic: read /inspector/api/events like the page does.

The inspector's cost is measured as scheduling throughput with N such clients connected
against none (`--inspector-clients N`). Each client reads the server-sent events as fast
as they come, as an open browser tab does, and counts what it received, so the report can
show that snapshots did flow during the run.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp
import anyio

EVENTS_PATH = "/inspector/api/events"


@dataclass
class StreamStats:
    events: int = 0
    bytes: int = 0
    errors: int = 0


async def read_events(base_url: str, stats: StreamStats) -> None:
    """Stream the inspector's events until cancelled, reconnecting after an error."""
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        while True:
            try:
                async with http.get(base_url + EVENTS_PATH) as resp:
                    resp.raise_for_status()
                    async for line in resp.content:
                        stats.bytes += len(line)
                        if line.startswith(b"data: "):
                            stats.events += 1
            except (aiohttp.ClientError, OSError):
                stats.errors += 1
            await anyio.sleep(0.5)
