"""Network handlers catch the client's API and transport errors, and only those.

Each background writer (pod status, PodGroup status, Events, the Lease) is run against a
client that fails its first request. A transport error is handled as it always was
(retried or left for the next write); any other exception is a bug: logged with its stack,
counted in asched_unexpected_errors_total{component}, and never retried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest
import structlog

from asched.api.podgroup import PodGroup
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, TransportError
from asched.leaderelection import LeaderElector
from asched.metrics import Metrics
from asched.plugins.coscheduling.status import PodGroupStatusWriter
from asched.recorder import EventRecorder
from asched.scheduler.podgroupstatus import PodGroupConditionWriter
from asched.scheduler.podstatus import IN_FLIGHT_WAIT_SECONDS, PodStatusWriter
from asched.testing import FakeClient
from tests.builders import make_native_pod_group, make_pod, make_pod_group


class FailingFirst(FakeClient):
    """A KubeClient whose first request raises `error`; later ones succeed."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error: Exception | None = error
        self.calls: list[tuple[str, str]] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        self.calls.append((method, path))
        await anyio.lowlevel.checkpoint()
        error, self.error = self.error, None
        if error is not None:
            raise error
        return {"metadata": {"resourceVersion": "1"}}


TRANSPORT = pytest.param(TransportError("PATCH x: connection reset"), False, id="transport")
BUG = pytest.param(KeyError("status"), True, id="bug")


def unexpected(metrics: Metrics, component: str) -> float:
    value = metrics.registry.get_sample_value(
        "asched_unexpected_errors_total", {"component": component}
    )
    return value or 0.0


def crashes(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log entries that carry the stack of the exception being handled."""
    return [e for e in logs if e.get("exc_info") is True]


@pytest.mark.parametrize(("error", "is_bug"), [TRANSPORT, BUG])
async def test_pod_status_writer(error: Exception, is_bug: bool) -> None:
    client, metrics = FailingFirst(error), Metrics(process_metrics=False)
    writer = PodStatusWriter(client, FakeClock(), metrics)
    with structlog.testing.capture_logs() as logs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            writer.set_unschedulable(make_pod("a").obj(), "Unschedulable", "no nodes")
            await anyio.wait_all_tasks_blocked()
            # The writer survives either way: the next update is sent.
            writer.set_unschedulable(make_pod("b").obj(), "Unschedulable", "no nodes")
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()

    assert [path.split("/")[6] for _, path in client.calls] == ["a", "b"]
    assert unexpected(metrics, "pod_status") == (1.0 if is_bug else 0.0)
    assert [e["event"] for e in crashes(logs)] == (["pod_status_update_crashed"] if is_bug else [])


@pytest.mark.parametrize(("error", "is_bug"), [TRANSPORT, BUG])
async def test_podgroup_condition_writer_retries_what_it_failed_to_write(
    error: Exception, is_bug: bool
) -> None:
    client, metrics = FailingFirst(error), Metrics(process_metrics=False)
    writer = PodGroupConditionWriter(client, FakeClock(), metrics)
    pg = make_native_pod_group("g").obj()
    with structlog.testing.capture_logs() as logs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            writer.set(pg, "False", "Unschedulable", "no room")
            await anyio.wait_all_tasks_blocked()
            # The same condition again: the failed write is forgotten, so it is re-sent;
            # a third identical one is not (the second was written).
            writer.set(pg, "False", "Unschedulable", "no room")
            await anyio.wait_all_tasks_blocked()
            writer.set(pg, "False", "Unschedulable", "no room")
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()

    assert [path.rsplit("/", 2)[-2] for _, path in client.calls] == ["g", "g"]
    assert unexpected(metrics, "podgroup_status") == (1.0 if is_bug else 0.0)
    assert [e["event"] for e in crashes(logs)] == (["podgroup_status_crashed"] if is_bug else [])
    assert writer.pending() == 0


class Recording(FakeClient):
    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[tuple[str, Any]] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        await self.arrive()
        self.bodies.append((path.split("/")[6], body))
        await anyio.lowlevel.checkpoint()
        return {}

    async def arrive(self) -> None:
        """Called as each request starts; subclasses hold requests here."""


class Gated(Recording):
    """Holds every PATCH until `release` is set; `entered` is set once one has started."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.started = 0

    async def arrive(self) -> None:
        self.started += 1
        self.entered.set()
        await self.release.wait()


async def test_pod_status_writer_nomination_only_and_merged() -> None:
    client = Recording()
    writer = PodStatusWriter(client, FakeClock())
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run)
        writer.set_nominated(make_pod("a").uid("ua").obj(), "n1")
        await anyio.wait_all_tasks_blocked()
        # A condition update still pending takes the later nomination with it.
        writer.set_unschedulable(make_pod("b").uid("ub").obj(), "Unschedulable", "no nodes")
        writer.set_nominated(make_pod("b").uid("ub").obj(), "n2")
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    (name_a, body_a), (name_b, body_b) = client.bodies
    assert (name_a, body_a) == (
        "a",
        {"metadata": {"uid": "ua"}, "status": {"nominatedNodeName": "n1"}},
    )
    assert name_b == "b"
    assert body_b["status"]["nominatedNodeName"] == "n2"
    assert body_b["status"]["conditions"][0]["message"] == "no nodes"


async def test_pod_status_writer_drops_the_updates_a_binding_supersedes() -> None:
    # Queued behind other patches, a nomination or a PodScheduled=False of an earlier
    # attempt would reach the API server after the pod's Binding and undo it; dropped
    # before Bind, neither is sent.
    client = Recording()
    writer = PodStatusWriter(client, FakeClock())
    writer.set_nominated(make_pod("a").uid("ua").obj(), "n1")
    await writer.before_binding("ua")
    writer.set_unschedulable(make_pod("b").uid("ub").obj(), "Unschedulable", "no nodes")
    writer.set_nominated(make_pod("b").uid("ub").obj(), "n2")
    await writer.before_binding("ub")
    await writer.before_binding("unknown")
    writer.set_unschedulable(make_pod("d").uid("ud").obj(), "Unschedulable", "no nodes")
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run)
        writer.set_nominated(make_pod("c").uid("uc").obj(), "n3")
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert [name for name, _ in client.bodies] == ["d", "c"]
    assert client.bodies[0][1]["status"]["conditions"][0]["message"] == "no nodes"
    assert client.bodies[1][1]["status"] == {"nominatedNodeName": "n3"}


async def test_pod_status_writer_binding_waits_for_the_patch_in_flight() -> None:
    # A patch already sent cannot be dropped; the Binding waits until it has been
    # applied, so the API server never sees it after the Binding.
    client = Gated()
    writer = PodStatusWriter(client, FakeClock())
    order: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run)
        writer.set_unschedulable(make_pod("a").uid("ua").obj(), "Unschedulable", "no nodes")
        await client.entered.wait()

        async def bind() -> None:
            await writer.before_binding("ua")
            order.append("bind")

        tg.start_soon(bind)
        await anyio.wait_all_tasks_blocked()
        assert order == []
        order.append("patch")
        client.release.set()
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert order == ["patch", "bind"]


async def test_pod_status_writer_binding_waits_for_a_patch_in_flight_only_so_long() -> None:
    # A patch stuck behind a rate limiter must not hold a gang member's Binding for
    # seconds: after IN_FLIGHT_WAIT_SECONDS the Binding goes on.
    client = Gated()
    clock = FakeClock()
    writer = PodStatusWriter(client, clock)
    bound = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run)
        writer.set_unschedulable(make_pod("a").uid("ua").obj(), "Unschedulable", "no nodes")
        await client.entered.wait()

        async def bind() -> None:
            await writer.before_binding("ua")
            bound.set()

        tg.start_soon(bind)
        await anyio.wait_all_tasks_blocked()
        clock.advance(IN_FLIGHT_WAIT_SECONDS - 0.01)
        await anyio.wait_all_tasks_blocked()
        assert not bound.is_set()
        clock.advance(0.01)
        await anyio.wait_all_tasks_blocked()
        assert bound.is_set()
        client.release.set()
        tg.cancel_scope.cancel()


async def test_coalescing_patcher_keeps_one_patch_per_object_in_flight() -> None:
    # A newer update of an object whose patch is in flight is sent after that one
    # finished, never beside it, so the two cannot be applied out of order.
    client = Gated()
    writer = PodStatusWriter(client, FakeClock())
    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run)
        writer.set_unschedulable(make_pod("a").uid("ua").obj(), "Unschedulable", "first")
        await client.entered.wait()
        writer.set_unschedulable(make_pod("a").uid("ua").obj(), "Unschedulable", "second")
        await anyio.wait_all_tasks_blocked()
        assert client.started == 1
        client.release.set()
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert client.started == 2
    messages = [body["status"]["conditions"][0]["message"] for _, body in client.bodies]
    assert messages == ["first", "second"]


@pytest.mark.parametrize(("error", "is_bug"), [TRANSPORT, BUG])
async def test_podgroup_status_writer(error: Exception, is_bug: bool) -> None:
    client, metrics = FailingFirst(error), Metrics(process_metrics=False)
    pg: PodGroup = make_pod_group("g").min_member(2).obj()

    def source(key: str) -> tuple[PodGroup, dict[str, Any]]:
        return pg, {"phase": "Scheduling"}

    writer = PodGroupStatusWriter(client, FakeClock(), source, errors=metrics)
    writer.mark("default/g")
    with structlog.testing.capture_logs() as logs:
        await writer.flush()

    # A transport failure is queued again for the group's next slot; a bug is not.
    assert writer.pending() == (0 if is_bug else 1)
    assert unexpected(metrics, "podgroup_status") == (1.0 if is_bug else 0.0)
    assert [e["event"] for e in crashes(logs)] == (
        ["podgroup_status_update_crashed"] if is_bug else []
    )


@pytest.mark.parametrize(("error", "is_bug"), [TRANSPORT, BUG])
async def test_event_recorder(error: Exception, is_bug: bool) -> None:
    client, metrics = FailingFirst(error), Metrics(process_metrics=False)
    recorder = EventRecorder(
        client, FakeClock(), reporting_instance="i", retry_interval=0.0, metrics=metrics
    )
    recorder.event(make_pod("a").obj(), "Warning", "FailedScheduling", "Scheduling", "no")
    with structlog.testing.capture_logs() as logs:
        await recorder.drain()

    # A transport failure is retried (the second POST lands); a bug is not retried.
    assert len(client.calls) == (1 if is_bug else 2)
    assert recorder.pending == 0
    assert unexpected(metrics, "event_recorder") == (1.0 if is_bug else 0.0)
    assert [e["event"] for e in crashes(logs)] == (["event_write_crashed"] if is_bug else [])


@pytest.mark.parametrize(("error", "is_bug"), [TRANSPORT, BUG])
async def test_leader_election_try(error: Exception, is_bug: bool) -> None:
    client, metrics = FailingFirst(error), Metrics(process_metrics=False)
    elector = LeaderElector(client, identity="me", clock=FakeClock(), errors=metrics)
    with structlog.testing.capture_logs() as logs:
        # One try of the acquire/renew loop: its GET fails, so the try fails and the loop
        # (not run here) tries again after retry_period, bug or not.
        acquired = await elector._try_acquire_or_renew()

    assert acquired is False
    assert unexpected(metrics, "leader_election") == (1.0 if is_bug else 0.0)
    assert [e["event"] for e in crashes(logs)] == (["lease_get_crashed"] if is_bug else [])


BOUND_FIRST = (
    'Pod "a" is invalid: status.nominatedNodeName: Forbidden: '
    "may not be set on pods that are already bound to a node"
)


@pytest.mark.parametrize(
    ("condition", "error", "level"),
    [
        # The Binding overtook a nomination already in flight: expected, not a warning.
        pytest.param(False, ApiError(422, "Invalid", BOUND_FIRST), "debug", id="moot"),
        # A condition update refused the same way lost its condition: a warning.
        pytest.param(True, ApiError(422, "Invalid", BOUND_FIRST), "warning", id="condition"),
        pytest.param(False, ApiError(422, "Invalid", "other"), "warning", id="other-422"),
        pytest.param(False, ApiError(500, "InternalError", BOUND_FIRST), "warning", id="500"),
    ],
)
async def test_a_nomination_refused_because_the_pod_is_bound_is_not_a_warning(
    condition: bool, error: ApiError, level: str
) -> None:
    client = FailingFirst(error)
    writer = PodStatusWriter(client, FakeClock())
    pod = make_pod("a").uid("ua").obj()
    with structlog.testing.capture_logs() as logs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            if condition:
                writer.set_unschedulable(pod, "Unschedulable", "no nodes", "n1")
            else:
                writer.set_nominated(pod, "n1")
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()
    failed = [e for e in logs if e["event"] == "pod_status_update_failed"]
    assert [(e["log_level"], e["pod"]) for e in failed] == [(level, "default/a")]
