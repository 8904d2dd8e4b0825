"""Paginated LIST: a collection read in pages so no single response is huge.

Mirrors client-go's tools/pager: pages of `limit` items chained by the server's `continue`
token. A continue token dies when etcd compacts past the list's snapshot (410 Expired);
client-go then falls back to a fresh full list. Here the list starts over, still paged,
and the page that starts the new snapshot says so (`restarted`), so a consumer that
gathers pages drops what it gathered before and never mixes two snapshots.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from asched.client.protocol import ApiError, KubeClient

log = structlog.get_logger(__name__)

# client-go's reflector asks for 500 per page. One 500-pod page (600 KiB of JSON, gzipped
# above 128 KiB) is decoded by one orjson call that holds the event loop: with 10000 pending
# pods at start-up the loop stalled 20-60 ms per page (benchmarks, basic 5000/10000, stall
# reporter). 100 keeps each decode near the loop-lag budget, at 5x the requests of a LIST
# that happens once per informer start.
DEFAULT_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class ListPage:
    items: list[dict[str, Any]]
    # The snapshot's resourceVersion (the same on every page of one snapshot).
    resource_version: str
    # True on the first page of a new snapshot after the continue token expired:
    # discard every page received before this one.
    restarted: bool = False


async def list_pages(
    client: KubeClient,
    path: str,
    params: Mapping[str, str] | None = None,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
) -> AsyncIterator[ListPage]:
    """Pages of the collection at *path*; raises ApiError/TransportError from any page."""
    query = dict(params or {})
    query["limit"] = str(limit)
    restarted = False
    while True:
        try:
            body = await client.request("GET", path, params=query)
        except ApiError as err:
            if not (err.gone and "continue" in query):
                raise
            log.info("list_continue_expired", path=path, message=err.message)
            del query["continue"]
            restarted = True
            continue
        page, token = _page(body, restarted)
        # Neither this frame nor the consumer's may hold a page while the next one is
        # fetched and parsed: two pages alive at once doubled a relist's transient peak,
        # which pymalloc's arenas keep (benchmarks.memtrace --step-peaks).
        del body
        yield page
        del page
        restarted = False
        if not token:
            return
        query["continue"] = token


def _page(body: Any, restarted: bool) -> tuple[ListPage, str]:
    """One LIST response as a page, and its continue token ("" on the last page)."""
    doc = body if isinstance(body, dict) else {}
    meta = doc.get("metadata") or {}
    page = ListPage(
        items=doc.get("items") or [],
        resource_version=str(meta.get("resourceVersion") or ""),
        restarted=restarted,
    )
    return page, str(meta.get("continue") or "")
