"""The faults scenario's recovery numbers, from the binds the observer saw."""

from __future__ import annotations

from typing import Any

from benchmarks.observer import Binding
from benchmarks.recovery import ApiServerRestart, summary
from benchmarks.scenarios import SCENARIOS, Params


async def never_serving() -> bool:
    return False


def restart(killed: float, ready: float, serving: float = 0.0) -> ApiServerRestart:
    r = ApiServerRestart(cluster=None, observer=None, after_bound=1, serving=never_serving)  # type: ignore[arg-type]
    r.killed_at, r.ready_at, r.serving_at = killed, ready, serving or ready
    return r


def binds(*times: float) -> dict[str, Binding]:
    return {f"p{i}": Binding("n", t) for i, t in enumerate(times)}


def test_recovery_is_from_readyz_to_the_last_bind() -> None:
    got: dict[str, Any] = summary(restart(100.0, 103.0), binds(98.0, 99.5, 104.0, 105.0, 120.0))
    assert got["last_bind_after_kill_s"] == 20.0
    assert got["apiserver_restarted"] is True
    assert got["apiserver_down_s"] == 3.0
    assert got["bound_before_restart"] == 2
    assert got["recovery_s"] == 17.0
    assert got["first_bind_after_ready_s"] == 1.0
    # 104 and 105 fall in the 10 s after readyz (103-113); 120 does not.
    assert got["binds_10s_after_ready"] == 2
    assert got["binds_per_s_10s_after_ready"] == 0.2


def test_from_the_kill_and_from_the_first_served_read_when_readyz_comes_after_every_bind() -> None:
    got: dict[str, Any] = summary(
        restart(100.0, 118.0, serving=102.5), binds(98.0, 101.0, 103.0, 104.0, 110.0)
    )
    assert "recovery_s" not in got
    assert got["binds_10s_after_ready"] == 0
    assert got["first_bind_after_kill_s"] == 1.0  # the bind the old server answered
    assert got["last_bind_after_kill_s"] == 10.0
    assert got["serving_after_kill_s"] == 2.5
    assert got["first_bind_after_serving_s"] == 0.5
    assert got["last_bind_after_serving_s"] == 7.5


def test_no_restart_no_numbers() -> None:
    assert summary(restart(0.0, 0.0), binds(1.0)) == {"apiserver_restarted": False}


def test_the_faults_scenario_restarts_halfway() -> None:
    s = SCENARIOS["faults"](Params(nodes=10, pods=40))
    assert s.restart_apiserver_at == 0.5
    assert len(s.pods) == 40
    assert len(s.nodes) == 10
