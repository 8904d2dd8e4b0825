"""One list, then a watch resumed for ever: the informer loop both harness watchers run.

The loop lists *path* once (handing every item to on_list), then watches from the list's
resourceVersion, handing each event to on_event. When the server closes the watch it
resumes from the last resourceVersion seen; on 410 Gone it lists again. A restarting API
server (5xx, or the connection refused or dropped: the faults scenario kills it) is
waited for and the watch resumed, so a run's observer outlives the restart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import aiohttp
import anyio
import structlog

from asched.localcluster import ApiError, ClusterClient, JsonObject
from asched.localcluster.rest import TransportError

log = structlog.get_logger(__name__)

RETRY_S = 0.2


async def list_and_watch(
    client: ClusterClient,
    path: str,
    *,
    on_list: Callable[[Sequence[JsonObject]], None],
    on_event: Callable[[str, JsonObject], None],
) -> None:
    """Run until cancelled; see the module docstring."""
    version = ""
    while True:
        try:
            if not version:
                items, version = await client.list_with_version(path)
                on_list(items)
            async with client.watch(
                path,
                resource_version=version,
                params={"timeoutSeconds": 300, "allowWatchBookmarks": True},
            ) as events:
                async for event in events:
                    obj = event["object"]
                    version = obj["metadata"].get("resourceVersion", version)
                    on_event(event["type"], obj)
        except ApiError as err:
            if err.status == 410:
                log.info("watch_expired_relisting", path=path)
                version = ""
                continue
            if err.status < 500:
                raise
            # A restarting API server answers 5xx until it is ready: wait and resume.
            log.info("watch_refused_resuming", path=path, status=err.status)
            await anyio.sleep(RETRY_S)
        except (TransportError, aiohttp.ClientError, OSError, TimeoutError) as err:
            # The API server went away: resume from the last version once it answers
            # again, relisting if that is gone.
            log.info("watch_lost_resuming", path=path, error=str(err))
            await anyio.sleep(RETRY_S)
