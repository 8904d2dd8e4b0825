"""Rendering hand-built explanations as text and JSON."""

from __future__ import annotations

import orjson
import pytest

from asched.explain.model import Explanation, NodeScores, NodeVerdict, PluginScore, Verdict
from asched.explain.render import render_json, render_text
from asched.framework.status import Code

FIT = Verdict("NodeResourcesFit", Code.UNSCHEDULABLE, ("Insufficient cpu",))
AFF = Verdict(
    "NodeAffinity",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match Pod's node affinity/selector",),
)


def pending() -> Explanation:
    return Explanation(
        pod="demo/big",
        profile="default-scheduler",
        nodes=[
            NodeVerdict("b1", AFF, [AFF, Verdict("NodeResourcesFit")]),
            NodeVerdict("a1", FIT, [Verdict("NodeAffinity"), FIT]),
            NodeVerdict("c1", AFF, [AFF, FIT]),
        ],
        fit_error="0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match.",
    )


def scored() -> Explanation:
    return Explanation(
        pod="demo/p",
        profile="default-scheduler",
        nodes=[
            NodeVerdict("n1", Verdict("")),
            NodeVerdict("n2", Verdict("")),
            NodeVerdict("n3", FIT, [FIT]),
        ],
        score_weights={"NodeResourcesFit": 1, "TaintToleration": 3},
        scores=[
            NodeScores(
                "n2",
                {
                    "NodeResourcesFit": PluginScore(90, 90, 90),
                    "TaintToleration": PluginScore(0, 100, 300),
                },
                390,
            ),
            NodeScores(
                "n1",
                {
                    "NodeResourcesFit": PluginScore(40, 40, 40),
                    "TaintToleration": PluginScore(0, 100, 300),
                },
                340,
            ),
        ],
        selected="n2",
        best=("n2",),
    )


def test_filter_table_shows_each_node_with_its_first_rejection_and_the_others() -> None:
    lines = render_text(pending())
    assert lines[0] == "Pod demo/big (profile default-scheduler)"
    start = lines.index("Filter: 0 of 3 node(s) fit")
    header, *rows = lines[start + 1 : start + 5]
    assert header.split() == ["NODE", "VERDICT", "PLUGIN", "REASON", "ALSO", "REJECTED", "BY"]
    # Sorted by node name; the reason column lines up.
    assert [r.split()[0] for r in rows] == ["a1", "b1", "c1"]
    assert rows[0].split()[1:4] == ["unschedulable", "NodeResourcesFit", "Insufficient"]
    assert rows[1].split()[1:3] == ["unresolvable", "NodeAffinity"]
    assert rows[2].endswith("NodeResourcesFit")  # c1 is also too small
    assert rows[0].endswith("-")
    assert (
        len({r.index("Insufficient") if "Insufficient" in r else r.index("node(s)") for r in rows})
        == 1
    )
    assert (
        "asched reports: 0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match."
        in lines
    )


def test_score_tables_show_weighted_totals_raw_normalized_and_the_pick() -> None:
    lines = render_text(scored())
    i = lines.index("Scores (normalized x weight, best first):")
    assert lines[i + 1].split() == ["NODE", "NodeResourcesFit(x1)", "TaintToleration(x3)", "TOTAL"]
    assert lines[i + 2].split() == ["n2", "90", "300", "390"]
    assert lines[i + 3].split() == ["n1", "40", "300", "340"]
    j = lines.index("Raw -> normalized scores:")
    assert lines[j + 2].split() == ["n2", "90", "->", "90", "0", "->", "100"]
    assert lines[-1] == "asched would pick: n2"
    assert "Filter: 2 of 3 node(s) fit" in lines


GATE = Verdict(
    "SchedulingGates", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [q]",)
)


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        ({"gate": GATE}, "PreEnqueue: gated by SchedulingGates: waiting for scheduling gates: [q]"),
        ({"bound_to": "n9"}, "already bound to n9; explained as if it were pending"),
        ({"narrowed_by": ("NodeAffinity",)}, "PreFilter: nodes narrowed by NodeAffinity"),
        ({"best": ("n1", "n2"), "selected": ""}, "asched would pick one of: n1, n2"),
        ({"notes": ["hello"]}, "  - hello"),
        (
            {"score_error": Verdict("Boom", Code.ERROR, ("kaboom",))},
            "Scoring failed: error by Boom: kaboom",
        ),
    ],
    ids=["gate", "bound", "narrowed", "tie", "notes", "score-error"],
)
def test_optional_lines(fields: dict[str, object], want: str) -> None:
    expl = scored()
    for name, value in fields.items():
        setattr(expl, name, value)
    assert want in render_text(expl)


def test_json_is_the_full_explanation() -> None:
    doc = orjson.loads(render_json(scored()))
    assert doc["pod"] == "demo/p"
    assert doc["feasible"] == ["n1", "n2"]
    assert doc["selected"] == "n2"
    n3 = next(n for n in doc["nodes"] if n["node"] == "n3")
    assert n3 == {
        "node": "n3",
        "feasible": False,
        "verdict": {
            "plugin": "NodeResourcesFit",
            "code": "Unschedulable",
            "reasons": ["Insufficient cpu"],
        },
        "checks": [
            {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]}
        ],
    }
    assert doc["scores"][0] == {
        "node": "n2",
        "total": 390,
        "plugins": {
            "NodeResourcesFit": {"raw": 90, "normalized": 90, "weighted": 90},
            "TaintToleration": {"raw": 0, "normalized": 100, "weighted": 300},
        },
    }
    assert doc["fitError"] is None
    assert orjson.loads(render_json(pending()))["fitError"].startswith("0/3 nodes")
