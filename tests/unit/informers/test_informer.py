"""The informer's reflector state machine, against an in-memory API (fake_api.FakeApi).

Every test checks two things: the events the handler got, and that the handler's own view
built from those events equals the server's objects (nothing lost, nothing repeated).
"""

from __future__ import annotations

import copy
import random
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from asched.api import DecodeError, Pod, decode_pod
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, TransportError
from asched.informers import Informer
from tests.builders import make_pod
from tests.unit.informers.fake_api import BROKEN, FakeApi

MAX_BACKOFF = 30.0


@dataclass
class Recorder:
    """Records events and keeps the view a cache would build from them, checking each step."""

    events: list[tuple[str, str, str]] = field(default_factory=list)
    view: dict[str, Pod] = field(default_factory=dict)
    fail_on: str = ""

    def on_add(self, obj: Pod) -> None:
        key = f"{obj.namespace}/{obj.name}"
        assert key not in self.view, f"add for known {key}"
        self.view[key] = obj
        self.events.append(("add", obj.name, obj.resource_version))
        if obj.name == self.fail_on:
            raise RuntimeError("handler bug")

    def on_update(self, old: Pod, new: Pod) -> None:
        key = f"{new.namespace}/{new.name}"
        assert self.view.get(key) is old, f"update with a stale old object for {key}"
        assert old is not new
        self.view[key] = new
        self.events.append(("update", new.name, new.resource_version))

    def on_delete(self, obj: Pod) -> None:
        key = f"{obj.namespace}/{obj.name}"
        assert key in self.view, f"delete for unknown {key}"
        del self.view[key]
        self.events.append(("delete", obj.name, obj.resource_version))

    def take(self) -> list[tuple[str, str, str]]:
        taken, self.events = self.events, []
        return taken


@dataclass
class ErrorRecorder(Recorder):
    decode_errors: list[tuple[str, str]] = field(default_factory=list)

    def on_decode_error(self, raw_key: str, error: DecodeError) -> None:
        self.decode_errors.append((raw_key, error.field))


@dataclass
class Rig:
    api: FakeApi
    clock: FakeClock
    handler: Recorder
    informer: Informer[Pod]

    def server_view(self) -> dict[str, str]:
        return {k: o["metadata"]["resourceVersion"] for k, o in self.api.objects.items()}

    def handler_view(self) -> dict[str, str]:
        return {k: p.resource_version for k, p in self.handler.view.items()}

    def store_view(self) -> dict[str, str]:
        return {f"{p.namespace}/{p.name}": p.resource_version for p in self.informer.store.list()}

    def assert_in_step(self) -> None:
        assert self.handler_view() == self.server_view()
        assert self.store_view() == self.server_view()

    def end_watch(self, error: Exception | None = None) -> None:
        """End the live watch after it ran a while (an instant empty end backs off)."""
        self.clock.advance(5.0)
        self.api.close_watches(error)

    async def backoff(self) -> None:
        """Let the informer's backoff sleep run out."""
        assert self.clock.sleepers == 1, "the informer should be backing off"
        self.clock.advance(MAX_BACKOFF)
        await settle()


async def settle() -> None:
    await anyio.wait_all_tasks_blocked()


def pod(name: str, cpu: str = "100m") -> dict[str, Any]:
    return make_pod(name).cpu(cpu).raw()


@pytest.fixture
def api() -> FakeApi:
    fake = FakeApi()
    for name in ("a", "b", "c"):
        fake.put(pod(name))
    return fake


def rig_factory(
    api: FakeApi,
    handler: Recorder | None = None,
    decode: Callable[[dict[str, Any]], Pod] = decode_pod,
    **kwargs: Any,
) -> Callable[[], Rig]:
    clock = FakeClock()
    recorder = handler or Recorder()
    informer: Informer[Pod] = Informer(
        api, "/api/v1/pods", decode, recorder, clock=clock, rng=random.Random(1), **kwargs
    )
    return lambda: Rig(api, clock, recorder, informer)


@asynccontextmanager
async def running(rig: Rig) -> AsyncIterator[Rig]:
    """The informer running (and settled) for the block; cancelled after it."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(rig.informer.run)
        await settle()
        yield rig
        tg.cancel_scope.cancel()


async def test_lists_in_pages_then_watches_from_the_list_version() -> None:
    api = FakeApi()
    for i in range(5):
        api.put(pod(f"p{i}"))
    r = rig_factory(api, page_size=2, params={"fieldSelector": "status.phase!=Failed"})()

    async with running(r) as rig:
        assert rig.informer.has_synced()
        assert [e[:2] for e in rig.handler.take()] == [("add", f"p{i}") for i in range(5)]
        assert [c.get("continue") for c in api.list_calls] == [None, "0:2", "0:4"]
        assert all(c["limit"] == "2" for c in api.list_calls)
        watch = api.watch_calls[-1]
        assert watch["resourceVersion"] == str(api.rv) == rig.informer.resource_version
        assert (watch["watch"], watch["allowWatchBookmarks"]) == ("true", "true")
        assert 300 <= int(watch["timeoutSeconds"]) < 600
        assert watch["fieldSelector"] == "status.phase!=Failed"
        assert api.list_calls[0]["fieldSelector"] == "status.phase!=Failed"
        rig.assert_in_step()


async def test_watch_events_reach_the_handler_in_order(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()

        rig.api.put(pod("d"))
        rig.api.put(pod("a", cpu="200m"))
        rig.api.delete("default/b")
        await settle()

        assert rig.handler.take() == [
            ("add", "d", "104"),
            ("update", "a", "105"),
            ("delete", "b", "106"),
        ]
        assert rig.informer.resource_version == "106"
        rig.assert_in_step()


async def test_bookmark_moves_the_resource_version_silently(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.api.advance(50)
        rig.api.bookmark()
        await settle()

        assert rig.informer.resource_version == str(rig.api.rv)
        assert rig.handler.take() == []

        rig.api.close_watches()
        await settle()

        assert rig.clock.sleepers == 0, "a normal close reconnects at once"
        assert rig.api.watch_calls[-1]["resourceVersion"] == str(rig.api.rv)
        assert len(rig.api.list_calls) == 1


@pytest.mark.parametrize(
    "as_http", [pytest.param(False, id="error-event"), pytest.param(True, id="http-410")]
)
async def test_expired_watch_relists_and_delivers_the_gap_exactly_once(
    api: FakeApi, as_http: bool
) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.api.gone_as_http = as_http
        rig.end_watch()
        # While disconnected: one update, one delete, one create; "c" stays as it was.
        rig.api.put(pod("a", cpu="300m"))
        rig.api.delete("default/b")
        rig.api.put(pod("d"))
        rig.api.compact()
        await settle()

        assert len(rig.api.list_calls) == 2
        # b's final state is unknown after a gap: the handler gets the last version it saw.
        assert rig.handler.take() == [
            ("delete", "b", "102"),
            ("update", "a", "104"),
            ("add", "d", "106"),
        ]
        assert rig.informer.resource_version == str(rig.api.rv)
        assert rig.clock.sleepers == 0
        rig.assert_in_step()


async def test_relist_with_nothing_changed_emits_nothing(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.end_watch()
        rig.api.advance(3)
        rig.api.compact()
        await settle()

        assert len(rig.api.list_calls) == 2
        assert rig.handler.take() == []


async def test_a_relist_decodes_only_what_changed(api: FakeApi) -> None:
    """Objects the store holds at the listed resourceVersion are not decoded again: a
    relist after a fault would otherwise build a second copy of the cache."""
    decoded: list[str] = []

    def counting(raw: dict[str, Any]) -> Pod:
        decoded.append(raw["metadata"]["name"])
        return decode_pod(raw)

    async with running(rig_factory(api, decode=counting)()) as rig:
        assert sorted(decoded) == ["a", "b", "c"]
        before = dict(rig.informer.store._items)
        decoded.clear()
        rig.handler.take()
        rig.end_watch()
        rig.api.advance(3)
        rig.api.compact()
        await settle()
        assert len(rig.api.list_calls) == 2
        assert decoded == []
        assert rig.handler.take() == []
        # The very objects the handler holds, not equal copies.
        assert all(rig.informer.store.get(k) is v for k, v in before.items())
        rig.assert_in_step()


class _Item(dict[str, Any]):
    """A listed object that can be watched for being freed (a plain dict cannot)."""


class PageWatchingApi(FakeApi):
    """Records, at each LIST request, how many objects of earlier pages are still alive."""

    def __init__(self) -> None:
        super().__init__()
        self._listed: list[weakref.ref[_Item]] = []
        self.alive_at_request: list[int] = []

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        self.alive_at_request.append(sum(ref() is not None for ref in self._listed))
        body = await super().request(method, path, **kwargs)
        items = [_Item(copy.deepcopy(raw)) for raw in body["items"]]
        self._listed.extend(weakref.ref(item) for item in items)
        return {**body, "items": items}


async def test_a_page_is_freed_before_the_next_is_fetched() -> None:
    """A relist's transient is one page, not two: neither the pager nor the informer
    holds a handled page while the next one is fetched and parsed."""
    api = PageWatchingApi()
    for i in range(6):
        api.put(pod(f"p{i}"))
    async with running(rig_factory(api, page_size=2)()) as rig:
        assert len(api.list_calls) == 3
        assert api.alive_at_request == [0, 0, 0]
        rig.end_watch()
        rig.api.advance(3)
        rig.api.compact()
        await settle()
        assert api.alive_at_request == [0, 0, 0, 0, 0, 0]
        rig.assert_in_step()


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(BROKEN, id="connection-reset"),
        pytest.param(ApiError(500, "InternalError", "etcd timeout"), id="http-500"),
    ],
)
async def test_broken_watch_backs_off_then_resumes_from_the_last_version(
    api: FakeApi, error: Exception
) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.api.put(pod("d"))
        await settle()
        rig.handler.take()
        seen_rv = rig.informer.resource_version

        rig.api.close_watches(error)
        rig.api.put(pod("e"))
        await settle()

        assert rig.handler.take() == []
        calls = len(rig.api.watch_calls)
        await rig.backoff()

        assert rig.api.watch_calls[calls]["resourceVersion"] == seen_rv
        assert rig.handler.take() == [("add", "e", "105")]
        assert len(rig.api.list_calls) == 1
        rig.assert_in_step()


async def test_error_event_other_than_410_backs_off_without_relisting(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.api.inject(b'{"type":"ERROR","object":{"kind":"Status","code":500,"message":"boom"}}')
        await settle()

        await rig.backoff()

        assert len(rig.api.list_calls) == 1
        assert rig.api.watch_calls[-1]["resourceVersion"] == "103"


async def test_unreadable_line_restarts_the_watch_without_loss(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.api.put(pod("d"))
        rig.api.inject(b"{not json")
        rig.api.put(pod("e"))  # after the bad line: must arrive on the next watch
        await settle()

        assert rig.handler.take() == [("add", "d", "104")]
        await rig.backoff()

        assert rig.handler.take() == [("add", "e", "105")]
        rig.assert_in_step()


async def test_watch_that_ends_at_once_and_empty_backs_off(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.api.close_watches()
        await settle()

        assert rig.clock.sleepers == 1


async def test_quiet_watch_that_lived_long_reconnects_at_once(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.clock.advance(400.0)  # the watch's timeout passed without events
        rig.api.close_watches()
        await settle()

        assert rig.clock.sleepers == 0
        assert len(rig.api.watch_calls) == 2


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ApiError(503, "ServiceUnavailable", "starting"), id="http-503"),
        pytest.param(TransportError("connection refused"), id="refused"),
    ],
)
async def test_failed_list_is_retried_and_sync_waits_for_it(api: FakeApi, error: Exception) -> None:
    api.list_faults = [error]

    async with running(rig_factory(api)()) as rig:
        assert not rig.informer.has_synced()
        assert rig.api.watch_calls == []
        await rig.backoff()

        assert rig.informer.has_synced()
        assert [e[0] for e in rig.handler.take()] == ["add"] * 3
        rig.assert_in_step()


@pytest.mark.parametrize(
    "optional", [pytest.param(True, id="optional"), pytest.param(False, id="required")]
)
async def test_missing_resource_syncs_empty_then_finds_it_later(optional: bool) -> None:
    api = FakeApi()
    api.missing = True

    async with running(rig_factory(api, optional=optional)()) as rig:
        assert rig.informer.has_synced()
        assert len(rig.informer.store) == 0
        api.missing = False
        api.put(pod("late"))
        await rig.backoff()

        assert rig.handler.take() == [("add", "late", "101")]
        rig.assert_in_step()


async def test_resource_that_disappears_empties_the_store(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.api.missing = True
        rig.api.close_watches(ApiError(404, "NotFound", "gone"))
        await settle()
        await rig.backoff()  # the watch's 404 backs off, then the relist finds nothing

        assert sorted(e[:2] for e in rig.handler.take()) == [
            ("delete", "a"),
            ("delete", "b"),
            ("delete", "c"),
        ]
        assert rig.informer.has_synced()


async def test_expired_continue_token_restarts_the_list_without_duplicates() -> None:
    api = FakeApi()
    for i in range(5):
        api.put(pod(f"p{i}"))
    api.expire_next_continue = True

    async with running(rig_factory(api, page_size=2)()) as rig:
        assert [e[:2] for e in rig.handler.take()] == [("add", f"p{i}") for i in range(5)]
        assert [c.get("continue") for c in api.list_calls] == [None, "0:2", None, "1:2", "1:4"]
        rig.assert_in_step()


@pytest.mark.parametrize(
    "handler",
    [
        pytest.param(ErrorRecorder(), id="with-callback"),
        pytest.param(Recorder(), id="without-callback"),
    ],
)
async def test_undecodable_objects_are_skipped_alone(handler: Recorder) -> None:
    api = FakeApi()
    api.put(pod("a"))
    api.put(pod("bad", cpu="lots"))
    api.put(pod("c"))

    async with running(rig_factory(api, handler)()) as rig:
        assert [e[:2] for e in handler.take()] == [("add", "a"), ("add", "c")]
        kept = rig.informer.store.get("default/a")

        api.put(pod("a", cpu="way-too-much"))  # an update that cannot be read
        api.put(pod("d"))
        await settle()

        assert handler.take() == [("add", "d", "105")]
        assert rig.informer.store.get("default/a") is kept, "the last good version stays"
        assert rig.informer.resource_version == "105"

        api.delete("default/a")  # its final state is unreadable too
        await settle()

        assert handler.take() == [("delete", "a", "101")]
        if isinstance(handler, ErrorRecorder):
            cpu = "spec.containers[0].resources.requests.cpu"
            assert handler.decode_errors == [
                ("default/bad", cpu),
                ("default/a", cpu),
                ("default/a", cpu),
            ]


async def test_relist_keeps_an_object_that_became_undecodable(api: FakeApi) -> None:
    async with running(rig_factory(api)()) as rig:
        rig.handler.take()
        rig.end_watch()
        rig.api.put(pod("a", cpu="broken"))
        rig.api.compact()
        await settle()

        assert rig.handler.take() == []
        assert rig.informer.store.get("default/a") is not None


async def test_a_failing_handler_does_not_stop_the_informer(api: FakeApi) -> None:
    async with running(rig_factory(api, Recorder(fail_on="b"))()) as rig:
        api.put(pod("d"))
        await settle()

        assert [e[:2] for e in rig.handler.take()] == [
            ("add", "a"),
            ("add", "b"),
            ("add", "c"),
            ("add", "d"),
        ]
        assert rig.informer.store.get("default/b") is not None


async def test_wait_synced_returns_after_the_first_list(api: FakeApi) -> None:
    api.list_faults = [BROKEN]
    rig = rig_factory(api)()
    async with anyio.create_task_group() as tg:
        tg.start_soon(rig.informer.run)
        await settle()
        synced: list[bool] = []

        async def waiter() -> None:
            await rig.informer.wait_synced()
            synced.append(True)

        tg.start_soon(waiter)
        await settle()
        assert synced == []
        await rig.backoff()
        assert synced == [True]
        tg.cancel_scope.cancel()


async def test_custom_key() -> None:
    api = FakeApi()
    api.put(pod("a"))
    recorder = Recorder()
    informer: Informer[Pod] = Informer(
        api, "/api/v1/pods", decode_pod, recorder, key=lambda p: p.uid, clock=FakeClock()
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(informer.run)
        await settle()
        tg.cancel_scope.cancel()

    assert informer.store.list_keys() == [api.objects["default/a"]["metadata"]["uid"]]
