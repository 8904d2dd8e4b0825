"""The Markdown table docs/benchmarks.md shows, built from result documents."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson

from benchmarks.report import load, markdown, rows


def _document(
    scenario: str,
    qps: float,
    per: dict[str, dict[str, Any]],
    ratios: dict[str, float] | None = None,
) -> dict[str, Any]:
    runs = [{"scheduler": who, "outcome": "complete"} for who in per]
    summary_per = {
        who: {"runs": 1, "complete_runs": 1, "violations": 0, "loadavg_1m": 1.5, **values}
        for who, values in per.items()
    }
    return {
        "scenario": scenario,
        "nodes": 10,
        "pods": 20,
        "qps": qps,
        "burst": 100,
        "runs": runs,
        "summary": {"per_scheduler": summary_per, "ratios": ratios or {}},
    }


def test_rows_put_kube_scheduler_first_and_ratio_on_ascheds_row() -> None:
    document = _document(
        "basic",
        50,
        {
            "asched": {"pods_per_s": 40.0},
            "kube-scheduler": {"pods_per_s": 50.0},
            "bare-bind": {"pods_per_s": 900.0},
        },
        {"asched/kube pods_per_s": 0.8},
    )
    table = rows(document)
    assert [r[3] for r in table] == ["kube-scheduler", "asched", "bare-bind"]
    assert [r[7] for r in table] == ["1", "0.80", "ceiling"]
    assert table[1][5] == "40"


def test_missing_numbers_print_as_dash() -> None:
    document = _document("basic", 50, {"asched": {"pods_per_s": math.nan}})
    assert rows(document)[0][5] == "-"


def test_gang_rows_show_time_per_gang() -> None:
    document = _document("gang", 5000, {"asched": {"pods_per_s": 10.0, "ms_per_gang": 12.34}})
    assert rows(document)[0][7] == "12.3 ms/gang"


def test_load_orders_by_scenario_then_size_then_unthrottled_first(tmp_path: Path) -> None:
    docs = [_document("gang", 5000, {}), _document("basic", 50, {}), _document("basic", 5000, {})]
    for i, doc in enumerate(docs):
        (tmp_path / f"{i}.json").write_bytes(orjson.dumps(doc))
    loaded = load(tmp_path.glob("*.json"))
    assert [(d["scenario"], d["qps"]) for d in loaded] == [
        ("basic", 5000),
        ("basic", 50),
        ("gang", 5000),
    ]
    assert markdown(loaded).count("\n") == 1  # header and rule only: no schedulers


def test_the_lag_cell_adds_the_longest_gc_pause_when_measured() -> None:
    lag = {"loop_lag_p99_ms": 20.0, "loop_lag_net_p99_ms": 3.0}
    old = _document("basic", 5000, {"asched": {"pods_per_s": 1.0, **lag}})
    new = _document("basic", 5000, {"asched": {"pods_per_s": 1.0, **lag, "gc_pause_max_ms": 12.8}})
    assert "20.0 (3.0)" in rows(old)[0]
    assert "20.0 (3.0; GC 12.8)" in rows(new)[0]


def test_a_scheduler_without_a_loop_shows_one_dash_fresh_or_reloaded() -> None:
    missing = {"loop_lag_p99_ms": math.nan, "loop_lag_net_p99_ms": math.nan}
    fresh = _document("basic", 5000, {"kube-scheduler": {"pods_per_s": 1.0, **missing}})
    nones = {"loop_lag_p99_ms": None, "loop_lag_net_p99_ms": None, "gc_pause_max_ms": None}
    reloaded = _document("basic", 5000, {"kube-scheduler": {"pods_per_s": 1.0, **nones}})
    assert rows(fresh)[0][11] == "-"
    assert rows(reloaded)[0][11] == "-"
