"""Informer: list + watch one resource into a typed Store and tell a handler what changed.

The algorithm is client-go's Reflector (tools/cache/reflector.go):
1. LIST in pages (limit 500) and replace the store, emitting to the handler the
   differences against what it held: a relist after a watch gap neither loses nor repeats
   changes, and objects deleted while disconnected get on_delete.
2. WATCH from the list's resourceVersion with bookmarks on and a random timeout of 5-10
   minutes, tracking the resourceVersion of every event, bookmarks included.
3. When the watch ends normally, watch again from the last resourceVersion.
4. On 410 Gone (an HTTP 410 or an ERROR event with code 410) the resourceVersion was
   compacted away: LIST again at once.
5. On other failures (network, 5xx, a watch that closed at once with nothing in it)
   wait with capped exponential backoff, then watch again from the last resourceVersion.
   A LIST that fails is retried the same way. A 404 (a CRD not installed, or deleted)
   leads to a LIST, and a 404 LIST counts as an empty list, like client-go's "emergency
   sync": the store is empty but synced, and the LIST is retried with backoff.

Decoding: raw line -> orjson -> event type and object dict -> `decode(object)`. An object
that fails to decode is logged with its key and field and skipped; its resourceVersion
still counts, and nothing else is lost. If the handler has `on_decode_error`, it is told.

Decisions beyond client-go, and why:
- On a relist, objects whose resourceVersion did not change produce no on_update: the
  handler already holds exactly that version (client-go sends a Replaced update anyway).
- On a relist, deletions are delivered before additions and updates, so a cache built from
  these events never holds both a deleted object and its replacement at once.
- A failed decode keeps the previous version of that object in the store (it still exists
  on the server; forgetting it would make the scheduler overcommit its node).
- A DELETED event for a key the handler never saw produces no on_delete.
- An exception from a handler is a bug in the handler: it is logged with the traceback and
  the informer carries on, so one bad object cannot stop the scheduler's view of the cluster.

`run()` never returns; the owner runs it in its task group and stops it by cancellation.
"""

from __future__ import annotations

import enum
import random
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel
import orjson
import structlog

from asched.api import DecodeError
from asched.base.clock import Clock, RealClock
from asched.client.pager import DEFAULT_PAGE_SIZE, list_pages
from asched.client.protocol import ApiError, KubeClient, TransportError
from asched.client.status import error_from_status
from asched.informers.backoff import Backoff
from asched.informers.handler import DecodeErrorHandler, EventHandler
from asched.informers.store import IndexFn, Store

# The pod informer's selector, as kube-scheduler's newPodInformer: every pod except those
# that finished (Succeeded/Failed), which hold no resources. A pod that finishes arrives
# as a DELETED event.
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"
NODES_PATH = "/api/v1/nodes"
PODS_PATH = "/api/v1/pods"

log = structlog.get_logger(__name__)

T = TypeVar("T")

# client-go's reflector: watch timeouts are drawn from [minWatchTimeout, 2*minWatchTimeout).
MIN_WATCH_TIMEOUT = 300.0
# A watch that ends this fast without a single event is a failure (client-go: "very short
# watch"), not a normal close, so it is retried with backoff instead of in a hot loop.
SHORT_WATCH = 1.0
# Yield to the event loop after this many objects handled in one go (relist, event bursts).
# Decoding a pod into its typed form costs about 0.05 ms; 64 of them stay under 5 ms.
CHECKPOINT_EVERY = 64
# How much of an undecodable object goes into the log.
_LOGGED_OBJECT_BYTES = 2048


def meta_key(raw: Mapping[str, Any]) -> str:
    """client-go's MetaNamespaceKeyFunc on a raw object: `namespace/name`, or `name`."""
    meta = raw.get("metadata") or {}
    name = str(meta.get("name") or "")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def _rv_of(raw: Mapping[str, Any]) -> str:
    return str((raw.get("metadata") or {}).get("resourceVersion") or "")


class _WatchEnd(enum.Enum):
    CLOSED = "closed"  # ended normally: watch again from the last RV
    GONE = "gone"  # resourceVersion too old: relist
    FAILED = "failed"  # back off, then watch again from the last RV
    MISSING = "missing"  # the resource is gone (404): back off, then relist


class Informer(Generic[T]):
    """One resource, listed and watched into `store`, changes delivered to `handler`."""

    def __init__(
        self,
        client: KubeClient,
        list_path: str,
        decode: Callable[[dict[str, Any]], T],
        handler: EventHandler[T],
        *,
        key: Callable[[T], str] | None = None,
        params: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        name: str | None = None,
        optional: bool = False,
        page_size: int = DEFAULT_PAGE_SIZE,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        rng: random.Random | None = None,
        indexers: Mapping[str, IndexFn[T]] | None = None,
    ) -> None:
        """*key* names a decoded object in the store; by default the raw object's
        `namespace/name`. A custom key must agree with that for undecodable deletes to
        find their stored object. *params* holds labelSelector/fieldSelector.
        *optional*: the resource may not exist (a CRD not installed yet); its 404s are
        expected, not warnings. *indexers* are the store's (Store.by_index)."""
        self.name = name or list_path
        self._client = client
        self._list_path = list_path
        self._decode_fn = decode
        self._handler = handler
        self._decode_error_handler = handler if isinstance(handler, DecodeErrorHandler) else None
        self._key = key
        self._params = dict(params or {})
        self._clock = clock or RealClock()
        self._optional = optional
        self._page_size = page_size
        self._min_watch_timeout = min_watch_timeout
        self._rng = rng or random.Random()
        self._backoff = Backoff(self._clock, rng=self._rng)
        self.store: Store[T] = Store(indexers)
        self._synced = anyio.Event()
        self._rv = ""
        self._log = log.bind(informer=self.name)

    @property
    def resource_version(self) -> str:
        """The last resourceVersion seen (list, event or bookmark)."""
        return self._rv

    def has_synced(self) -> bool:
        return self.store.has_synced()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    async def run(self) -> None:
        """List, then watch forever; cancel to stop."""
        need_list = True
        while True:
            if need_list:
                if not await self._list():
                    await self._backoff.wait()
                    continue
                need_list = False
            end = await self._watch()
            if end is _WatchEnd.GONE:
                need_list = True
            elif end is _WatchEnd.FAILED:
                await self._backoff.wait()
            elif end is _WatchEnd.MISSING:
                need_list = True
                await self._backoff.wait()

    # -- LIST ----------------------------------------------------------------------------

    async def _list(self) -> bool:
        """One full paginated LIST into the store; False when it failed (back off)."""
        fresh: dict[str, tuple[T, str]] = {}
        failed: set[str] = set()
        rv = ""
        try:
            pages = list_pages(self._client, self._list_path, self._params, limit=self._page_size)
            async with _closing(pages):
                async for page in pages:
                    if page.restarted:
                        fresh.clear()
                        failed.clear()
                    rv = page.resource_version
                    await self._take(page.items, fresh, failed)
                    # Not held while the next page is fetched and parsed (see list_pages).
                    del page
        except ApiError as err:
            if not err.not_found:
                self._log.warning("informer_list_failed", status=err.status, error=str(err))
                return False
            # client-go syncs an empty list when the resource is missing, so whoever waits
            # for this informer to sync is not blocked by a CRD that is not installed.
            level = self._log.info if self._optional else self._log.warning
            level("informer_resource_missing", path=self._list_path)
            await self._replace({}, set())
            self._rv = ""
            self._set_synced()
            return False
        except TransportError as err:
            self._log.warning("informer_list_failed", error=str(err))
            return False
        await self._replace(fresh, failed)
        self._rv = rv
        self._set_synced()
        self._log.info("informer_listed", objects=len(self.store), resource_version=rv)
        return True

    async def _take(
        self, items: list[dict[str, Any]], fresh: dict[str, tuple[T, str]], failed: set[str]
    ) -> None:
        """One page's objects into *fresh* (decoded only when changed) or *failed*."""
        for handled, raw in enumerate(items, 1):
            kept = self._unchanged(raw)
            if kept is not None:
                fresh[kept[0]] = kept[1]
                continue
            decoded = self._decode(raw)
            if decoded is None:
                failed.add(meta_key(raw))
            else:
                fresh[decoded[0]] = (decoded[1], _rv_of(raw))
            if handled % CHECKPOINT_EVERY == 0:
                await anyio.lowlevel.checkpoint()

    def _unchanged(self, raw: dict[str, Any]) -> tuple[str, tuple[T, str]] | None:
        """The stored object and its resourceVersion when a relisted *raw* object is the
        version the store holds: it is not decoded again. A relist after a fault lists
        every object, nearly all unchanged; decoding them all built a second copy of the
        cache beside it (4000 pods and 1000 nodes in the soak) only for `_replace` to
        skip them, a transient peak of the heap that RSS kept. Only with the default key:
        a custom one needs the decoded object."""
        if self._key is not None:
            return None
        key = meta_key(raw)
        rv = _rv_of(raw)
        if not rv or self.store.resource_version(key) != rv:
            return None
        obj = self.store.get(key)
        return None if obj is None else (key, (obj, rv))

    async def _replace(self, fresh: dict[str, tuple[T, str]], failed: set[str]) -> None:
        store = self.store
        handled = 0
        for key in store.list_keys():
            if key in fresh or key in failed:
                continue
            gone = store.remove(key)
            if gone is not None:
                self._call(self._handler.on_delete, gone)
            handled += 1
            if handled % CHECKPOINT_EVERY == 0:
                await anyio.lowlevel.checkpoint()
        for key, (obj, rv) in fresh.items():
            if store.resource_version(key) == rv:
                continue
            old = store.upsert(key, obj, rv)
            if old is None:
                self._call(self._handler.on_add, obj)
            else:
                self._call(self._handler.on_update, old, obj)
            handled += 1
            if handled % CHECKPOINT_EVERY == 0:
                await anyio.lowlevel.checkpoint()

    def _set_synced(self) -> None:
        if not self.store.has_synced():
            self.store.mark_synced()
            self._synced.set()

    # -- WATCH ---------------------------------------------------------------------------

    def _watch_params(self) -> dict[str, str]:
        timeout = int(self._min_watch_timeout * (1.0 + self._rng.random()))
        return {
            **self._params,
            "watch": "true",
            "resourceVersion": self._rv,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout),
        }

    async def _watch(self) -> _WatchEnd:
        started = self._clock.now()
        events = 0
        try:
            lines = self._client.stream_lines(self._list_path, self._watch_params())
            async with _closing(lines):
                async for line in lines:
                    self._on_line(line)
                    events += 1
                    if events % CHECKPOINT_EVERY == 0:
                        await anyio.lowlevel.checkpoint()
        except ApiError as err:
            if err.gone:
                self._log.info("informer_watch_expired", resource_version=self._rv)
                return _WatchEnd.GONE
            self._log.warning("informer_watch_failed", status=err.status, error=str(err))
            if err.not_found:
                return _WatchEnd.MISSING
            return _WatchEnd.FAILED
        except (TransportError, _BadEvent) as err:
            self._log.warning("informer_watch_failed", error=str(err), events=events)
            return _WatchEnd.FAILED
        if events == 0 and self._clock.now() - started < SHORT_WATCH:
            self._log.warning("informer_watch_too_short", resource_version=self._rv)
            return _WatchEnd.FAILED
        self._log.debug("informer_watch_closed", events=events, resource_version=self._rv)
        return _WatchEnd.CLOSED

    def _on_line(self, line: bytes) -> None:
        try:
            event = orjson.loads(line)
            kind = event["type"]
            raw = event["object"]
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            # The resourceVersion does not advance, so watching again loses nothing.
            raise _BadEvent(f"unreadable watch event: {exc}: {line[:200]!r}") from None
        if not isinstance(raw, dict):
            raise _BadEvent(f"watch event without an object: {line[:200]!r}")
        if kind == "ERROR":
            raise error_from_status(raw, method="WATCH", path=self._list_path)
        rv = _rv_of(raw)
        if kind in ("ADDED", "MODIFIED"):
            self._upsert(raw, rv)
        elif kind == "DELETED":
            self._delete(raw)
        elif kind != "BOOKMARK":
            self._log.warning("informer_unknown_event", type=kind)
        if rv:
            self._rv = rv

    def _upsert(self, raw: dict[str, Any], rv: str) -> None:
        decoded = self._decode(raw)
        if decoded is None:
            return
        key, obj = decoded
        # client-go processDeltas: an Added for a known key is an update, and vice versa.
        old = self.store.upsert(key, obj, rv)
        if old is None:
            self._call(self._handler.on_add, obj)
        else:
            self._call(self._handler.on_update, old, obj)

    def _delete(self, raw: dict[str, Any]) -> None:
        decoded = self._decode(raw)
        key = decoded[0] if decoded is not None else meta_key(raw)
        old = self.store.remove(key)
        if old is None:
            return
        # The final state when readable, else the last version the handler knew.
        self._call(self._handler.on_delete, decoded[1] if decoded is not None else old)

    # -- decoding and calling out --------------------------------------------------------

    def _decode(self, raw: dict[str, Any]) -> tuple[str, T] | None:
        try:
            obj = self._decode_fn(raw)
        except DecodeError as err:
            self._decode_failed(raw, err)
            return None
        except Exception as exc:
            # A decoder bug, not bad data; still only this object is skipped.
            self._log.exception("informer_decoder_crashed", key=meta_key(raw))
            kind = str(raw.get("kind") or self.name)
            self._decode_failed(raw, DecodeError(kind, meta_key(raw), "", repr(exc)))
            return None
        key = self._key(obj) if self._key is not None else meta_key(raw)
        return key, obj

    def _decode_failed(self, raw: dict[str, Any], err: DecodeError) -> None:
        key = meta_key(raw)
        self._log.error(
            "informer_decode_failed",
            key=key,
            field=err.field,
            error=err.message,
            object=orjson.dumps(raw)[:_LOGGED_OBJECT_BYTES].decode(errors="replace"),
        )
        if self._decode_error_handler is not None:
            self._call(self._decode_error_handler.on_decode_error, key, err)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            self._log.exception("informer_handler_failed", handler=getattr(fn, "__name__", ""))


@asynccontextmanager
async def _closing(iterator: AsyncIterator[Any]) -> AsyncIterator[None]:
    """Close an async generator when leaving the block early (releases its connection)."""
    try:
        yield
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


class _BadEvent(Exception):
    """A watch line that is not a readable event; the watch is restarted."""
