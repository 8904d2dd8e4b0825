"""Turns result JSON files into the Markdown tables of docs/benchmarks.md.

One row per scenario, client limits and scheduler, with the medians over that command's
runs, and the asched / kube-scheduler ratio on asched's row. The numbers are printed as
measured; nothing is adjusted for the load the machine was under, which each row states.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

COLUMNS = (
    "scenario",
    "nodes/pods",
    "qps/burst",
    "scheduler",
    "runs",
    "pods/s mean",
    "pods/s p50 (1 s)",
    "ratio",
    "latency p50 / p99 (s)",
    "CPU s",
    "peak RSS MiB",
    "loop lag p99 ms (net of CPU wait; longest GC pause, at most)",
    "apiserver CPU s",
    "checks",
    "load 1m",
)


def _num(value: Any, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{float(value):.{digits}f}"


SCENARIO_ORDER = ("basic", "spread", "antiaffinity", "gang", "gang-oversub")


def _order(document: Mapping[str, Any]) -> tuple[int, int, int, float]:
    """Scenario as in docs/benchmarks.md, then size, then unthrottled before default limits."""
    name = document["scenario"]
    rank = SCENARIO_ORDER.index(name) if name in SCENARIO_ORDER else len(SCENARIO_ORDER)
    return rank, document["nodes"], document["pods"], -document["qps"]


def load(paths: Iterable[Path]) -> list[dict[str, Any]]:
    documents = [orjson.loads(p.read_bytes()) for p in paths]
    return sorted(documents, key=_order)


def _checks(per: Mapping[str, Any], runs: list[dict[str, Any]], who: str) -> str:
    mine = [r for r in runs if r["scheduler"] == who]
    parts = [f"{per['complete_runs']}/{per['runs']} complete"]
    if any("checks" in r for r in mine):
        parts.append(f"{per['violations']} violations")
    gangs = [r["checks"] for r in mine if "complete_gangs" in (r.get("checks") or {})]
    if gangs:
        parts.append(
            f"gangs complete {sorted(g['complete_gangs'] for g in gangs)}, "
            f"partial {sorted(g['partial_gangs'] for g in gangs)}"
        )
    return "; ".join(parts)


def _lag(per: Mapping[str, Any]) -> str:
    total, net = per.get("loop_lag_p99_ms"), per.get("loop_lag_net_p99_ms")
    gc_max = per.get("gc_pause_max_ms")
    # Absent (kube-scheduler has no loop) is None in a reloaded document, NaN in a fresh one.
    if _absent(total) or _absent(net):
        return _num(total, 1)
    if _absent(gc_max):
        return f"{_num(total, 1)} ({_num(net, 1)})"
    return f"{_num(total, 1)} ({_num(net, 1)}; GC {_num(gc_max, 1)})"


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def rows(document: Mapping[str, Any]) -> list[list[str]]:
    summary = document.get("summary") or {}
    per_scheduler: Mapping[str, Any] = summary.get("per_scheduler") or {}
    ratios: Mapping[str, Any] = summary.get("ratios") or {}
    out = []
    order = [
        w for w in ("kube-scheduler", "asched", "asched-plugins", "bare-bind") if w in per_scheduler
    ]
    for who in order:
        per = per_scheduler[who]
        if who == "asched":
            ratio = _num(ratios.get("asched/kube pods_per_s"), 2)
        elif who == "asched-plugins":
            # Against kube-scheduler's default profile, then asched's own (paired).
            ratio = (
                f"{_num(ratios.get('asched-plugins/kube-scheduler pods_per_s paired median'), 2)}"
                f" ({_num(ratios.get('asched-plugins/asched pods_per_s paired median'), 2)}"
                " of asched)"
            )
        elif who == "bare-bind":
            ratio = "ceiling"
        else:
            ratio = "1"
        if who == "asched" and "gang" in document["scenario"]:
            ratio = f"{_num(per.get('ms_per_gang'), 1)} ms/gang"
        out.append(
            [
                document["scenario"],
                f"{document['nodes']}/{document['pods']}",
                f"{document['qps']:g}/{document['burst']}",
                who,
                str(per["runs"]),
                _num(per.get("pods_per_s")),
                _num(per.get("per_second_p50")),
                ratio,
                f"{_num(per.get('latency_p50_s'), 1)} / {_num(per.get('latency_p99_s'), 1)}",
                _num(per.get("cpu_seconds"), 1),
                _num(per.get("peak_rss_mib")),
                _lag(per),
                _num(per.get("kube-apiserver_cpu_seconds"), 1),
                _checks(per, document["runs"], who),
                _num(per.get("loadavg_1m"), 2),
            ]
        )
    return out


def markdown(documents: Iterable[Mapping[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for document in documents:
        for row in rows(document):
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
