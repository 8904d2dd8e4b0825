"""The e2e verdict: read ginkgo's JSON report, compare asched with kube-scheduler per spec.

No cluster: the reports are written here in ginkgo's format (the fields report.py reads).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.report import PASSED, SpecResult, compare, read_report, render_table


def _spec(leaf: str, state: str, *, seconds: float = 1.0, **extra: object) -> dict[str, object]:
    return {
        "ContainerHierarchyTexts": ["[sig-scheduling] SchedulerPredicates"],
        "LeafNodeText": leaf,
        "LeafNodeType": "It",
        "State": state,
        "RunTime": int(seconds * 1e9),
        **extra,
    }


def test_read_report_keeps_run_specs_and_drops_setup_and_unfocused(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    specs = [
        {"LeafNodeType": "SynchronizedBeforeSuite", "State": "passed", "RunTime": 1},
        _spec("ran", "passed", seconds=2.5, NumAttempts=1),
        _spec("retried", "passed", NumAttempts=2),
        _spec("not in focus", "skipped"),
        _spec("called Skip", "skipped", Failure={"Message": "no zones"}),
        _spec("broke", "failed", Failure={"Message": "timed out"}),
    ]
    report.write_text(json.dumps([{"SpecReports": specs}]))
    results = {
        r.name.removeprefix("[sig-scheduling] SchedulerPredicates "): r for r in read_report(report)
    }
    assert sorted(results) == ["broke", "called Skip", "ran", "retried"]
    assert results["ran"] == SpecResult(
        "[sig-scheduling] SchedulerPredicates ran", PASSED, 2.5, "", attempts=1
    )
    assert results["retried"].attempts == 2
    assert results["called Skip"].message == "no zones"
    assert results["broke"].state == "failed"


def _r(name: str, state: str) -> SpecResult:
    return SpecResult(name, state, 1.0)


@pytest.mark.parametrize(
    ("asched", "kube", "regression"),
    [
        pytest.param("passed", "passed", False, id="both-pass"),
        pytest.param("failed", "passed", True, id="asched-fails-what-kube-passes"),
        pytest.param("timedout", "passed", True, id="asched-times-out"),
        pytest.param(None, "passed", True, id="asched-never-reported-it"),
        pytest.param("failed", "failed", False, id="both-fail"),
        pytest.param("passed", "failed", False, id="only-kube-fails"),
        pytest.param("skipped", "skipped", False, id="both-skip"),
        pytest.param("failed", None, False, id="kube-never-reported-it"),
    ],
)
def test_a_regression_is_a_spec_kube_scheduler_passes_and_asched_does_not(
    asched: str | None, kube: str | None, regression: bool
) -> None:
    rows = compare(
        [] if asched is None else [_r("s", asched)], [] if kube is None else [_r("s", kube)]
    )
    assert [(row.name, row.regression) for row in rows] == [("s", regression)]


def test_table_marks_regressions_and_counts_both_sides() -> None:
    rows = compare(
        [_r("[sig-scheduling] a", "passed"), _r("[sig-scheduling] b", "failed")],
        [
            _r("[sig-scheduling] a", "passed"),
            _r("[sig-scheduling] b", "passed"),
            _r("[sig-scheduling] c", "failed"),
        ],
    )
    lines = render_table(rows).splitlines()
    assert [line.split()[-1] for line in lines[1:4]] == ["a", "b", "c"]
    assert ["!!" in line for line in lines[1:4]] == [False, True, False]
    assert "missing" in lines[3]
    assert lines[-3] == "asched: 1 failed, 1 missing, 1 passed; 2s in specs"
    assert lines[-2] == "kube-scheduler: 1 failed, 2 passed; 3s in specs"
    assert lines[-1] == "asched fails 1 spec(s) kube-scheduler passes"
