"""Explanations as text for people and JSON for programs.

Text: a header, the Filter table (node | verdict | plugin | reason | also rejected by),
then the Score tables (weighted scores and totals; raw -> normalized) and the node asched
would pick. Plain ASCII, no terminal needed. JSON: `Explanation.to_dict()`, indented.
"""

from __future__ import annotations

import orjson

from asched.explain.model import Explanation, NodeVerdict, code_label
from asched.explain.table import format_table

NONE = "-"


def render_json(expl: Explanation) -> str:
    return orjson.dumps(expl.to_dict(), option=orjson.OPT_INDENT_2).decode()


def render_text(expl: Explanation) -> list[str]:
    lines = [f"Pod {expl.pod} (profile {expl.profile})"]
    if expl.bound_to:
        lines.append(f"already bound to {expl.bound_to}; explained as if it were pending")
    if expl.gate is not None:
        lines.append(f"PreEnqueue: gated by {expl.gate.plugin}: {expl.gate.message}")
    if expl.pre_filter is not None:
        pf = expl.pre_filter
        lines.append(f"PreFilter: {code_label(pf.code)} by {pf.plugin}: {pf.message}")
    elif expl.narrowed_by:
        lines.append(f"PreFilter: nodes narrowed by {', '.join(expl.narrowed_by)}")
    if expl.skipped_filters:
        lines.append(f"Filter plugins skipped by PreFilter: {', '.join(expl.skipped_filters)}")
    lines += ["", *_filter_section(expl)]
    if expl.fit_error:
        lines += ["", f"asched reports: {expl.fit_error}"]
    if expl.score_error is not None:
        se = expl.score_error
        lines += ["", f"Scoring failed: {code_label(se.code)} by {se.plugin}: {se.message}"]
    if expl.scores:
        lines += ["", *_score_section(expl)]
    if expl.notes:
        lines += ["", "Notes:", *(f"  - {n}" for n in expl.notes)]
    return lines


def _filter_section(expl: Explanation) -> list[str]:
    fit = len(expl.feasible)
    head = f"Filter: {fit} of {len(expl.nodes)} node(s) fit"
    rows = [_filter_row(v) for v in sorted(expl.nodes, key=lambda v: (not v.feasible, v.node))]
    headers = ("NODE", "VERDICT", "PLUGIN", "REASON", "ALSO REJECTED BY")
    return [head, *format_table(headers, rows)] if rows else [head]


def _filter_row(v: NodeVerdict) -> list[str]:
    verdict = v.verdict
    others = [c.plugin for c in v.checks if not c.ok and c.plugin != verdict.plugin]
    return [
        v.node,
        code_label(verdict.code),
        verdict.plugin or NONE,
        verdict.message or NONE,
        ", ".join(others) or NONE,
    ]


def _score_section(expl: Explanation) -> list[str]:
    plugins = list(expl.score_weights)
    weighted = format_table(
        ["NODE", *(f"{p}(x{expl.score_weights[p]})" for p in plugins), "TOTAL"],
        [
            [s.node, *(str(s.plugins[p].weighted) for p in plugins), str(s.total)]
            for s in expl.scores
        ],
    )
    raw = format_table(
        ["NODE", *plugins],
        [
            [s.node, *(f"{s.plugins[p].raw} -> {s.plugins[p].normalized}" for p in plugins)]
            for s in expl.scores
        ],
    )
    lines = ["Scores (normalized x weight, best first):", *weighted]
    if plugins:
        lines += ["", "Raw -> normalized scores:", *raw]
    if expl.skipped_scores:
        lines.append(f"Score plugins skipped by PreScore: {', '.join(expl.skipped_scores)}")
    if expl.selected:
        lines += ["", f"asched would pick: {expl.selected}"]
    elif expl.best:
        lines += ["", f"asched would pick one of: {', '.join(expl.best)}"]
    return lines
