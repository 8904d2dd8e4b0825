"""Framework runtime: every extension point, error wrapping, Permit wait/allow/reject/timeout."""

from __future__ import annotations

import anyio
import pytest
import structlog

from asched.client.protocol import ApiError, TransportError, request_context
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code
from asched.framework.types import NodeToStatus
from asched.metrics import Metrics
from tests.builders import make_node, make_pod
from tests.unit.framework.fakes import FakeServices, Gate, Recorder, framework


def _ni(name: str, ok: bool = True) -> NodeInfo:
    b = make_node(name)
    if ok:
        b.label("ok", "true")
    return NodeInfo(b.obj())


async def test_filter_rejection_carries_plugin_name() -> None:
    fwk = framework()
    st = await fwk.run_filter_plugins(CycleState(), make_pod("p").obj(), _ni("n", ok=False))
    assert st is not None
    assert (st.code, st.plugin, st.reasons) == (
        Code.UNSCHEDULABLE,
        "Label",
        ("node(s) didn't have ok=true",),
    )


async def test_plugin_exception_becomes_error_status_tagged_with_plugin() -> None:
    fwk = framework(filters=("Label", "Boom"))
    st = await fwk.run_filter_plugins(
        CycleState(), make_pod("p").label("boom", "1").obj(), _ni("n")
    )
    assert st is not None
    assert st.code == Code.ERROR
    assert st.plugin == "Boom"
    assert "kaboom" in st.message()


async def test_plugin_exception_is_logged_with_its_stack_and_counted() -> None:
    services = FakeServices()
    services.metrics = metrics = Metrics(process_metrics=False)
    fwk = framework(filters=("Label", "Boom"), services=services)

    with structlog.testing.capture_logs() as logs:
        await fwk.run_filter_plugins(CycleState(), make_pod("p").label("boom", "1").obj(), _ni("n"))

    [entry] = [e for e in logs if e["event"] == "plugin_error"]
    assert (entry["plugin"], entry["point"], entry["exc_info"]) == ("Boom", "Filter", True)
    assert (
        metrics.registry.get_sample_value("asched_unexpected_errors_total", {"component": "plugin"})
        == 1.0
    )


async def test_async_filter_is_awaited() -> None:
    fwk = framework(filters=("AsyncFilter",))
    assert fwk.has_async_filters()
    st = await fwk.run_filter_plugins(CycleState(), make_pod("p").obj(), _ni("x-slow-reject"))
    assert st is not None
    assert st.plugin == "AsyncFilter"


@pytest.mark.parametrize(
    ("label", "code", "skipped"),
    [
        ("reject", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, False),
        ("skip", None, True),
        ("", None, False),
    ],
    ids=["rejects", "skip-removes-filter", "passes"],
)
async def test_pre_filter_outcomes(label: str, code: Code | None, skipped: bool) -> None:
    fwk = framework()
    state = CycleState()
    pod = make_pod("p").label("prefilter", label).obj()
    _, st, rejectors = await fwk.run_pre_filter(state, pod, [])
    assert (st.code if st else None) == code
    assert ("Label" in state.skip_filter_plugins) == skipped
    # An Unresolvable PreFilter ends the point and reports no narrowing plugins; its own
    # status names it (RunPreFilterPlugins).
    assert rejectors == set()
    if code:
        assert st is not None
        assert st.plugin == "Label"
    if skipped:
        assert fwk.filter_fns(state) == []


async def test_pre_filter_empty_node_set_is_unresolvable() -> None:
    fwk = framework(args={"Label": frozenset()})
    _, st, rejectors = await fwk.run_pre_filter(CycleState(), make_pod("p").obj(), [])
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert rejectors == {"Label"}


async def test_score_table_has_raw_normalized_and_weighted_scores() -> None:
    fwk = framework(scores=(("Prefer", 3),))
    pod = make_pod("p").label("prefer", "a").obj()
    table, st = await fwk.run_score_plugins(CycleState(), pod, [_ni("a"), _ni("bb")])
    assert st is None
    assert table.nodes == ["a", "bb"]
    (prefer,) = table.plugins
    assert (prefer.plugin, prefer.weight) == ("Prefer", 3)
    assert prefer.raw == [10, 1]
    assert prefer.normalized == [100, 10]
    assert prefer.weighted == [300, 30]
    assert table.totals == [300, 30]


async def test_no_score_plugin_gives_every_node_one() -> None:
    fwk = framework(scores=())
    table, st = await fwk.run_score_plugins(CycleState(), make_pod("p").obj(), [_ni("a"), _ni("b")])
    assert st is None
    assert table.totals == [1, 1]


async def test_out_of_range_score_is_an_error() -> None:
    fwk = framework(scores=(("Prefer", 1),))
    fwk.plugins["Prefer"].normalize_score = lambda *a: None  # type: ignore[attr-defined]
    pod = make_pod("p").label("raw", "101").obj()
    _, st = await fwk.run_score_plugins(CycleState(), pod, [_ni("a")])
    assert st is not None
    assert st.code == Code.ERROR
    assert st.message() == (
        'applying score defaultWeights on Score plugins: plugin "Prefer" returns an invalid '
        "score 101, it should in the range of [0, 100] after normalizing"
    )


def test_reserve_failure_and_idempotent_unreserve() -> None:
    fwk = framework()
    pod = make_pod("p").label("reserve", "fail").obj()
    st = fwk.run_reserve(CycleState(), pod, "n")
    assert st is not None
    assert st.plugin == "Gate"
    fwk.run_unreserve(CycleState(), pod, "n")
    fwk.run_unreserve(CycleState(), pod, "n")
    gate = fwk.plugins["Gate"]
    assert isinstance(gate, Gate)
    assert gate.unreserved == ["p", "p"]


def test_permit_reject_is_unschedulable() -> None:
    fwk = framework()
    st = fwk.run_permit(CycleState(), make_pod("p").label("permit", "reject").obj(), "n")
    assert st is not None
    assert st.code == Code.UNSCHEDULABLE
    assert st.plugin == "Gate"
    assert len(fwk.waiting_pods) == 0


async def test_permit_wait_then_allow() -> None:
    fwk = framework()
    pod = make_pod("p").label("permit", "wait").obj()
    st = fwk.run_permit(CycleState(), pod, "n")
    assert st is not None
    assert st.code == Code.WAIT
    wp = fwk.waiting_pods.get(pod.uid)
    assert wp is not None
    assert wp.pending_plugins == ["Gate"]
    result: list[object] = []
    async with anyio.create_task_group() as tg:

        async def waiter() -> None:
            result.append(await fwk.wait_on_permit(pod))

        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        wp.allow("Gate")
    assert result == [None]
    assert len(fwk.waiting_pods) == 0


async def test_permit_wait_then_reject_by_another_plugin() -> None:
    fwk = framework()
    pod = make_pod("p").label("permit", "wait").obj()
    fwk.run_permit(CycleState(), pod, "n")
    result: list[object] = []
    async with anyio.create_task_group() as tg:

        async def waiter() -> None:
            result.append(await fwk.wait_on_permit(pod))

        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        assert fwk.waiting_pods.reject(pod.uid, "Coscheduling", "sibling failed")
    st = result[0]
    assert st is not None
    assert getattr(st, "plugin", "") == "Coscheduling"
    assert getattr(st, "reasons", ()) == ("sibling failed",)


async def test_permit_timeout_rejects_on_injected_clock() -> None:
    services = FakeServices()
    fwk = framework(services=services)
    pod = make_pod("p").label("permit", "wait").label("timeout", "5").obj()
    fwk.run_permit(CycleState(), pod, "n")
    result: list[object] = []
    async with anyio.create_task_group() as tg:

        async def waiter() -> None:
            result.append(await fwk.wait_on_permit(pod))

        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        services.clock.advance(4.9)
        await anyio.wait_all_tasks_blocked()
        assert not result
        services.clock.advance(0.2)
    st = result[0]
    assert st is not None
    assert getattr(st, "code", None) == Code.UNSCHEDULABLE
    assert "timeout after waiting 5s at plugin Gate" in getattr(st, "reasons", ("",))[0]


async def test_bind_skips_to_next_binder() -> None:
    fwk = framework(binders=("SkipBinder", "Binder"))
    st = await fwk.run_bind(CycleState(), make_pod("p").obj(), "n1")
    assert st is None
    assert fwk.plugins["Binder"].bound == [("p", "n1")]  # type: ignore[attr-defined]


BIND_FAILURES = [
    pytest.param(
        TransportError("POST b: connection closed before the answer was complete"),
        "transport",
        id="transport",
    ),
    pytest.param(TransportError("POST b: TimeoutError", timeout=True), "timeout", id="timeout"),
    pytest.param(ApiError(409, "Conflict", "already assigned"), "conflict", id="409"),
    pytest.param(ApiError(503, "ServiceUnavailable", "restarting"), "server_error", id="503"),
    pytest.param(ApiError(429, "TooManyRequests", "slow down"), "too_many_requests", id="429"),
]


@pytest.mark.parametrize(("error", "kind"), BIND_FAILURES)
async def test_bind_request_failure_is_an_error_status_not_a_crash(
    error: Exception, kind: str
) -> None:
    # The issue: a Binding cut by an API server restart was reported as a plugin crash
    # (plugin_error with a stack, asched_unexpected_errors_total{component="plugin"}).
    services = FakeServices()
    services.metrics = metrics = Metrics(process_metrics=False)
    fwk = framework(binders=("RaisingBinder",), services=services)
    fwk.plugins["RaisingBinder"].error = error  # type: ignore[attr-defined]

    with structlog.testing.capture_logs() as logs:
        st = await fwk.run_bind(CycleState(), make_pod("p").obj(), "n1")

    assert st is not None
    assert (st.code, st.plugin, st.error) == (Code.ERROR, "RaisingBinder", error)
    assert st.message().startswith('running Bind plugin "RaisingBinder": ')
    assert not [e for e in logs if e.get("exc_info") or e["log_level"] == "error"]
    [entry] = [e for e in logs if e["event"] == "plugin_request_failed"]
    assert (entry["log_level"], entry["kind"], entry["point"]) == ("warning", kind, "Bind")
    assert (
        metrics.registry.get_sample_value("asched_unexpected_errors_total", {"component": "plugin"})
        is None
    )


async def test_a_request_failure_keeps_the_context_the_plugin_gave_it() -> None:
    # DynamicResources lets a failed claim write propagate inside request_context, as Go's
    # bindClaim wraps its errors: the Status still says which claim.
    fwk = framework(binders=("RaisingBinder",))
    with pytest.raises(ApiError) as raised, request_context("binding claim ns/c"):
        raise ApiError(409, "Conflict", "the object has been modified")
    fwk.plugins["RaisingBinder"].error = raised.value  # type: ignore[attr-defined]

    st = await fwk.run_bind(CycleState(), make_pod("p").obj(), "n1")

    assert st is not None
    assert st.message() == (
        'running Bind plugin "RaisingBinder": binding claim ns/c: the object has been modified'
    )


async def test_bind_bug_is_still_a_crash_report() -> None:
    services = FakeServices()
    services.metrics = metrics = Metrics(process_metrics=False)
    fwk = framework(binders=("RaisingBinder",), services=services)
    fwk.plugins["RaisingBinder"].error = KeyError("spec")  # type: ignore[attr-defined]

    with structlog.testing.capture_logs() as logs:
        st = await fwk.run_bind(CycleState(), make_pod("p").obj(), "n1")

    assert st is not None
    assert st.code == Code.ERROR
    [entry] = [e for e in logs if e["event"] == "plugin_error"]
    assert entry["exc_info"] is True
    assert (
        metrics.registry.get_sample_value("asched_unexpected_errors_total", {"component": "plugin"})
        == 1.0
    )


async def test_bind_all_skip_is_skip_status() -> None:
    fwk = framework(binders=("SkipBinder",))
    st = await fwk.run_bind(CycleState(), make_pod("p").obj(), "n1")
    assert st is not None
    assert st.code == Code.SKIP


async def test_post_filter_nominates() -> None:
    fwk = framework()
    res, st = await fwk.run_post_filter(
        CycleState(), make_pod("p").label("nominate", "n9").obj(), NodeToStatus()
    )
    assert st is None
    assert res is not None
    assert res.nominated_node_name == "n9"
    res, st = await fwk.run_post_filter(CycleState(), make_pod("q").obj(), NodeToStatus())
    assert st is not None
    assert st.message() == "preemption: not eligible"


async def test_nominated_pods_take_resources_first() -> None:
    """A nominated higher-priority pod on the node makes a filter see its usage."""
    services = FakeServices()
    fwk = framework(filters=("Label",), services=services)
    node = _ni("n")

    calls: list[int] = []

    def counting_filter(state: CycleState, pod: object, ni: NodeInfo) -> None:
        calls.append(len(ni.pods))

    fwk._filterer._filters = [("Count", counting_filter, False)]
    services.nominated["n"] = [make_pod("big").priority(100).obj()]
    st = await fwk.run_filter_plugins_with_nominated_pods(
        CycleState(), make_pod("p").priority(10).obj(), node
    )
    assert st is None
    assert calls == [1, 0]  # once with the nominated pod added, once without
    assert not node.pods  # the snapshot's NodeInfo is not mutated


def test_enqueue_hints_default_to_all_events_for_plugins_without_extensions() -> None:
    fwk = framework(filters=("Label", "Boom"))
    hints = fwk.enqueue_hints()
    assert hints["Label"] == []
    assert hints["Boom"][0].event.label == "*"


def test_recorder_fake_is_recorder() -> None:
    assert Recorder().events == []
