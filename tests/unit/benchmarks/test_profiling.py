"""Summarizing py-spy's collapsed stacks into self and inclusive shares."""

from __future__ import annotations

from benchmarks.profiling import hotspots

STACKS = [
    "main (app.py:1);schedule (algo.py:10);score (fit.py:5) 6",
    "main (app.py:1);schedule (algo.py:12);filter (fit.py:9) 3",
    "main (app.py:2) 1",
    "not a stack line",
]


def test_self_time_goes_to_the_leaf_and_lines_of_one_function_merge() -> None:
    report = hotspots(STACKS)
    assert report.startswith("10 samples")
    self_part = report.split("incl %")[0]
    assert " 60.0  score (fit.py)" in self_part
    assert " 30.0  filter (fit.py)" in self_part
    assert " 10.0  main (app.py)" in self_part


def test_inclusive_time_counts_a_function_once_per_stack() -> None:
    inclusive = hotspots(STACKS).split("incl %")[1]
    assert "100.0  main (app.py)" in inclusive
    assert " 90.0  schedule (algo.py)" in inclusive


def test_no_samples() -> None:
    assert hotspots([]) == "no samples"
