"""LoopLagMonitor: overshoot of a periodic sleep, on a FakeClock."""

from __future__ import annotations

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.looplag import LoopLagMonitor, thread_cpu_wait


async def settle() -> None:
    for _ in range(5):
        await anyio.lowlevel.checkpoint()
    await anyio.wait_all_tasks_blocked()


async def sample(monitor: LoopLagMonitor, clock: FakeClock, wakeups: list[float]) -> None:
    """Let the monitor sleep once per entry, waking it `interval + lag` later."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(monitor.run)
        await settle()
        for late_by in wakeups:
            clock.advance(late_by)
            await settle()
        tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("wakeups", "expected_lags"),
    [
        pytest.param([0.1, 0.1], [0.0, 0.0], id="on-time"),
        pytest.param([0.15, 0.1, 0.35], [0.05, 0.0, 0.25], id="late-wakeups"),
    ],
)
async def test_lag_is_the_overshoot_past_the_interval(
    wakeups: list[float], expected_lags: list[float]
) -> None:
    clock = FakeClock()
    observed: list[float] = []
    monitor = LoopLagMonitor(clock, interval=0.1, observe=observed.append)

    await sample(monitor, clock, wakeups)

    assert observed == pytest.approx(expected_lags)
    assert monitor.samples == len(expected_lags)
    assert monitor.max == pytest.approx(max(expected_lags))


@pytest.mark.parametrize(
    ("lags", "q", "expected"),
    [
        pytest.param([], 0.99, 0.0, id="no-samples"),
        pytest.param([0.001 * i for i in range(1, 101)], 0.99, 0.099, id="p99-of-100"),
        pytest.param([0.001 * i for i in range(1, 101)], 0.5, 0.050, id="median-of-100"),
        pytest.param([0.2, 0.0, 0.0], 1.0, 0.2, id="max"),
    ],
)
async def test_quantiles_use_nearest_rank(lags: list[float], q: float, expected: float) -> None:
    clock = FakeClock()
    monitor = LoopLagMonitor(clock, interval=1.0)

    await sample(monitor, clock, [1.0 + lag for lag in lags])

    assert monitor.quantile(q) == pytest.approx(expected)


async def test_only_the_last_window_samples_count() -> None:
    clock = FakeClock()
    monitor = LoopLagMonitor(clock, interval=1.0, window=3)

    await sample(monitor, clock, [1.5, 1.0, 1.0, 1.0])  # the 0.5 s lag falls out

    assert monitor.samples == 3
    assert monitor.p99 == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"interval": 0.0}, "interval", id="zero-interval"),
        pytest.param({"window": 0}, "window", id="empty-window"),
    ],
)
def test_invalid_settings(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LoopLagMonitor(FakeClock(), **kwargs)  # type: ignore[arg-type]


async def test_net_lag_takes_off_the_time_the_thread_waited_for_a_cpu() -> None:
    clock = FakeClock()
    waited = [0.0]
    net: list[float] = []
    monitor = LoopLagMonitor(
        clock, interval=0.1, observe_net=net.append, cpu_wait=lambda: waited[0]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(monitor.run)
        await settle()
        # (lag, CPU wait in the interval): all starvation; half of it; more wait than lag.
        for late_by, cpu_wait in [(0.05, 0.05), (0.04, 0.02), (0.01, 0.03)]:
            waited[0] += cpu_wait
            clock.advance(0.1 + late_by)
            await settle()
        tg.cancel_scope.cancel()
    assert net == pytest.approx([0.0, 0.02, 0.0])
    assert monitor.net_quantile(1.0) == pytest.approx(0.02)


async def test_no_net_lag_where_the_kernel_does_not_report_cpu_wait() -> None:
    clock = FakeClock()
    net: list[float] = []
    monitor = LoopLagMonitor(clock, interval=0.1, observe_net=net.append, cpu_wait=lambda: None)
    await sample(monitor, clock, [0.15])
    assert net == []
    assert monitor.net_quantile(0.99) == 0.0


def test_this_threads_cpu_wait_reads_from_schedstat() -> None:
    first = thread_cpu_wait()
    if first is None:
        pytest.skip("this kernel does not report schedstat")
    assert first >= 0.0
    second = thread_cpu_wait()
    assert second is not None
    assert second >= first


async def test_on_tick_runs_after_every_sample() -> None:
    clock = FakeClock()
    ticks: list[int] = []
    monitor = LoopLagMonitor(clock, interval=0.1, on_tick=lambda: ticks.append(monitor.samples))
    await sample(monitor, clock, [0.1, 0.2, 0.1])
    assert ticks == [1, 2, 3]
