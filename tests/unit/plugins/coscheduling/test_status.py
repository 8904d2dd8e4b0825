"""PodGroup status: phases, and the batched writer's coalescing and rate limit."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from asched.api.podgroup import PodGroup
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, TransportError
from asched.plugins.coscheduling.status import (
    MemberCounts,
    PodGroupStatusWriter,
    desired_status,
    phase_for,
)
from tests.builders import make_pod_group
from tests.unit.plugins.coscheduling.fakes import not_found
from tests.unit.plugins.fakes import RecordingClient

PATH = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/g/status"


@pytest.mark.parametrize(
    ("counts", "want"),
    [
        pytest.param(MemberCounts(total=2), "Pending", id="fewer-pods-than-min-member"),
        pytest.param(MemberCounts(total=3, scheduled=2), "Scheduling", id="scheduling"),
        pytest.param(MemberCounts(total=3, scheduled=3), "Scheduled", id="all-bound"),
        pytest.param(
            MemberCounts(total=3, scheduled=3, running=2, succeeded=1),
            "Running",
            id="running-or-done",
        ),
        pytest.param(
            MemberCounts(total=3, scheduled=3, running=2, failed=1), "Failed", id="a-member-failed"
        ),
        pytest.param(
            MemberCounts(total=3, scheduled=3, succeeded=3), "Finished", id="all-succeeded"
        ),
    ],
)
def test_phase_follows_the_members(counts: MemberCounts, want: str) -> None:
    assert phase_for(3, counts) == want


class Source:
    """What the manager would compute for each group when its slot comes."""

    def __init__(self) -> None:
        self.groups: dict[str, tuple[PodGroup, dict[str, Any]]] = {}
        self.calls = 0

    def set(self, pg: PodGroup, fields: dict[str, Any]) -> None:
        self.groups[pg.key] = (pg, fields)

    def __call__(self, key: str) -> tuple[PodGroup, dict[str, Any]] | None:
        self.calls += 1
        found = self.groups.get(key)
        return None if found is None else (found[0], dict(found[1]))


def _writer() -> tuple[PodGroupStatusWriter, Source, RecordingClient, FakeClock]:
    client, clock, source = RecordingClient(), FakeClock(), Source()
    return PodGroupStatusWriter(client, clock, source, interval=1.0), source, client, clock


def _pg(name: str = "g", **status: Any) -> PodGroup:
    b = make_pod_group(name).min_member(3)
    return (b.status(**status) if status else b).obj()


def _written(client: RecordingClient) -> list[dict[str, Any]]:
    return [r[2]["status"] for r in client.requests]


async def test_marks_coalesce_into_one_patch_computed_when_written() -> None:
    w, source, client, _ = _writer()
    pg = _pg()
    for n in (1, 2, 3):
        source.set(pg, desired_status(pg, MemberCounts(total=3, scheduled=n)))
        w.mark(pg.key)
    await w.flush()
    assert source.calls == 1  # members counted once, not once per mark
    [(method, path, body, content_type)] = client.requests
    assert (method, path, content_type) == ("PATCH", PATH, "application/merge-patch+json")
    assert body["metadata"] == {"uid": pg.uid}
    assert body["status"] == {"phase": "Scheduled", "scheduled": 3}


async def test_a_group_is_written_at_most_once_per_interval() -> None:
    w, source, client, clock = _writer()
    pg = _pg()
    source.set(pg, {"phase": "Scheduling", "scheduled": 1})
    w.mark(pg.key, {"scheduleStartTime": "2026-01-01T00:00:00Z"})
    await w.flush()
    source.set(pg, {"phase": "Scheduling", "scheduled": 2})
    w.mark(pg.key)
    await w.flush()
    assert len(client.requests) == 1
    clock.advance(1.0)
    await w.flush()
    assert _written(client) == [
        {"phase": "Scheduling", "scheduled": 1, "scheduleStartTime": "2026-01-01T00:00:00Z"},
        {"scheduled": 2},
    ]


@pytest.mark.parametrize(
    ("observed", "fields", "want"),
    [
        pytest.param({"phase": "Scheduling"}, {"phase": "Scheduling"}, None, id="already-observed"),
        pytest.param(
            {"phase": "Pending"},
            {"phase": "Scheduling", "scheduled": 0},
            {"phase": "Scheduling"},
            id="only-the-changed-field",
        ),
    ],
)
async def test_only_changed_fields_are_written(
    observed: dict[str, Any], fields: dict[str, Any], want: dict[str, Any] | None
) -> None:
    w, source, client, _ = _writer()
    pg = _pg(**observed)
    source.set(pg, fields)
    w.mark(pg.key)
    await w.flush()
    assert _written(client) == ([want] if want else [])


async def test_what_we_wrote_wins_over_a_stale_observation() -> None:
    w, source, client, clock = _writer()
    pg = _pg(phase="Pending")
    source.set(pg, {"phase": "Scheduling"})
    w.mark(pg.key)
    await w.flush()
    clock.advance(1.0)
    source.set(pg, {"phase": "Pending"})  # the informer has not seen our write yet
    w.mark(pg.key)
    await w.flush()
    assert _written(client) == [{"phase": "Scheduling"}, {"phase": "Pending"}]


async def test_failed_write_is_retried_with_the_callers_fields() -> None:
    w, source, client, clock = _writer()
    client.errors.append(ApiError(500, "InternalError", "etcd"))
    pg = _pg()
    source.set(pg, {"phase": "Scheduling"})
    w.mark(pg.key, {"scheduleStartTime": "2026-01-01T00:00:00Z"})
    await w.flush()
    assert client.requests == []
    assert w.pending() == 1
    clock.advance(1.0)
    await w.flush()
    assert _written(client) == [
        {"phase": "Scheduling", "scheduleStartTime": "2026-01-01T00:00:00Z"},
    ]


@pytest.mark.parametrize("how", ["api-404", "gone-from-informer"])
async def test_a_missing_group_is_dropped(how: str) -> None:
    w, source, client, _ = _writer()
    pg = _pg()
    if how == "api-404":
        source.set(pg, {"phase": "Scheduling"})
        client.errors.append(not_found())
    w.mark(pg.key)
    await w.flush()
    assert w.pending() == 0
    assert client.requests == []


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        pytest.param(ApiError(409, "Conflict", "uid"), False, id="conflict-recreated"),
        pytest.param(ApiError(404, "NotFound", "gone"), False, id="not-found"),
        pytest.param(ApiError(500, "InternalError", "etcd"), True, id="server-error"),
        pytest.param(ApiError(429, "TooManyRequests", "slow"), True, id="throttled"),
        pytest.param(ApiError(422, "Invalid", "bad"), True, id="invalid"),
        pytest.param(TransportError("PATCH x: reset", broken=True), True, id="transport"),
        pytest.param(TransportError("PATCH x: slow", timeout=True), True, id="timeout"),
        pytest.param(ConnectionResetError("reset"), True, id="unwrapped-oserror"),
    ],
)
async def test_a_failed_write_is_dropped_or_retried_by_its_kind(
    error: Exception, retried: bool
) -> None:
    w, source, client, clock = _writer()
    client.errors.append(error)
    pg = _pg()
    source.set(pg, {"phase": "Scheduling"})
    w.mark(pg.key)
    await w.flush()
    assert w.pending() == (1 if retried else 0)
    clock.advance(1.0)
    await w.flush()
    assert _written(client) == ([{"phase": "Scheduling"}] if retried else [])


async def test_run_writes_in_batches() -> None:
    w, source, client, clock = _writer()
    pg, other = _pg(), _pg("h")
    source.set(pg, {"scheduled": 1})
    source.set(other, {"scheduled": 1})
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        await anyio.wait_all_tasks_blocked()
        w.mark(pg.key)
        w.mark(other.key)
        await anyio.wait_all_tasks_blocked()
        assert len(client.requests) == 2
        for n in range(2, 10):  # a burst within the interval
            source.set(pg, {"scheduled": n})
            w.mark(pg.key)
            await anyio.wait_all_tasks_blocked()
        assert len(client.requests) == 2
        clock.advance(1.0)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert _written(client) == [{"scheduled": 1}, {"scheduled": 1}, {"scheduled": 9}]
