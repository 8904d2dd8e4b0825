"""LoopLagMonitor: overshoot of a periodic sleep, on a FakeClock."""

from __future__ import annotations

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.looplag import LoopLagMonitor


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
