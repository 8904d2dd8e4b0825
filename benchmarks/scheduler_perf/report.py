"""The Markdown table of upstream-workload results (docs/benchmarks.md).

One row per workload: pods/s of both schedulers (SchedulingThroughput Average, medians of
the repetitions), the median of the paired asched/kube-scheduler ratios, the side-by-side
runner's pods/s mean over the same pods (first to last bind), upstream's
threshold, the scheduler's CPU per measured pod, the nodes created and the 1-minute load
average before the runs (the table is measured on a shared machine).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.scheduler_perf.run import summarize
from benchmarks.schedulers import Kind

HEADER = (
    "| workload | params | nodes | asched pods/s | kube-scheduler pods/s | asched/kube "
    "(paired) | bind-window pods/s asched / kube | bind-window asched/kube (paired) "
    "| threshold | asched CPU ms/pod | kube CPU ms/pod | created pods/s | load 1m | runs |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
)


def _num(value: float, digits: int = 0) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _params(document: Mapping[str, Any]) -> str:
    overrides = document.get("overrides") or {}
    text = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items())) or "as upstream"
    return text + ("; backlog" if document.get("backlog") else "")


def _created(per: Mapping[str, Mapping[str, float]]) -> str:
    """The slower creation rate of the measured pods over both schedulers' runs (a
    throughput near it was bound by the harness, not the scheduler)."""
    rates = [v.get("created_per_s", math.nan) for v in per.values()]
    finite = [r for r in rates if not math.isnan(r)]
    return _num(min(finite)) if finite else "-"


def _runs(document: Mapping[str, Any]) -> str:
    parts = []
    for who in (Kind.ASCHED.value, Kind.KUBE.value):
        mine = [r for r in document["runs"] if r["scheduler"] == who]
        if mine:
            done = sum(1 for r in mine if r["outcome"] == "complete")
            parts.append(f"{who} {done}/{len(mine)}")
    return ", ".join(parts)


def row(document: Mapping[str, Any]) -> str:
    # Recomputed from the runs, so files written by an older executor get today's columns.
    summary = summarize(document["runs"])
    per: Mapping[str, Mapping[str, float]] = summary.get("per_scheduler") or {}
    nan: Mapping[str, float] = {}
    a = per.get(Kind.ASCHED.value, nan)
    k = per.get(Kind.KUBE.value, nan)
    loads = [v.get("loadavg_1m", math.nan) for v in per.values()]
    load = max((x for x in loads if not math.isnan(x)), default=math.nan)
    # A workload without an upstream threshold (0 or absent) shows "-", not 0 pods/s.
    threshold = document.get("threshold") or 0
    return (
        f"| {document['test_case']}/{document['workload']} | {_params(document)} "
        f"| {document['nodes']} "
        f"| {_num(a.get('pods_per_s', math.nan))} | {_num(k.get('pods_per_s', math.nan))} "
        f"| {_num(summary.get('paired_ratio_median', math.nan), 2)} "
        f"| {_num(a.get('bind_window_pods_per_s', math.nan))} / "
        f"{_num(k.get('bind_window_pods_per_s', math.nan))} "
        f"| {_num(summary.get('paired_bind_window_ratio_median', math.nan), 2)} "
        f"| {f'{threshold:g}' if threshold else '-'} "
        f"| {_num(a.get('cpu_ms_per_pod', math.nan), 2)} "
        f"| {_num(k.get('cpu_ms_per_pod', math.nan), 2)} "
        f"| {'-' if document.get('backlog') else _created(per)} "
        f"| {_num(load, 1)} | {_runs(document)} |"
    )


def markdown(documents: Sequence[Mapping[str, Any]]) -> str:
    rows = [row(d) for d in documents]
    errors = [
        f"- {d['test_case']}/{d['workload']} {r['scheduler']} run {r['repetition']}: {r['error']}"
        for d in documents
        for r in d["runs"]
        if r.get("error")
    ]
    text = "\n".join([HEADER, *rows])
    if errors:
        text += "\n\nFailed runs:\n" + "\n".join(errors)
    return text
