"""Node selectors decided for many nodes at once, from the label columns.

A label requirement reads one label's value, so it is decided once per distinct value
(LabelColumn.mask) and spread to rows by their value codes. Terms AND their requirements,
selectors OR their terms, exactly as asched.api.labels' per-node `matches` (which follow
component-helpers' nodeaffinity.NodeSelector.Match); the property tests in
tests/unit/framework/test_columns_agree.py compare the two.
"""

from __future__ import annotations

import numpy as np

from asched.api.labels import NodeSelector, NodeSelectorTerm, Requirement
from asched.framework.columns import Bools, Int64s, NodeColumns

_NAME_FIELD = "metadata.name"


def requirement_rows(cols: NodeColumns, req: Requirement, rows: Int64s) -> Bools:
    column = cols.label(req.key)
    out: Bools = column.mask(req)[column.codes[rows]]
    return out


def term_rows(cols: NodeColumns, term: NodeSelectorTerm, rows: Int64s) -> Bools:
    """NodeSelectorTerm.matches per row; a term with no requirement matches nothing."""
    if not term.match_expressions and not term.match_fields:
        return np.zeros(len(rows), dtype=np.bool_)
    out = np.ones(len(rows), dtype=np.bool_)
    for req in term.match_expressions:
        out &= requirement_rows(cols, req, rows)
    if term.match_fields:
        names = cols.names
        # Field selectors name nodes; rare, and PreFilter already narrowed the nodes.
        out &= np.fromiter(
            (
                all(r.matches({_NAME_FIELD: names[i]}) for r in term.match_fields)
                for i in rows.tolist()
            ),
            np.bool_,
            len(rows),
        )
    return out


def selector_rows(cols: NodeColumns, selector: NodeSelector, rows: Int64s) -> Bools:
    """NodeSelector.matches per row: any term matches."""
    out = np.zeros(len(rows), dtype=np.bool_)
    for term in selector.terms:
        out |= term_rows(cols, term, rows)
    return out


def label_equals_rows(cols: NodeColumns, key: str, value: str, rows: Int64s) -> Bools:
    """labels.get(key) == value per row."""
    column = cols.label(key)
    code = column.code(value)
    if code is None:
        return np.zeros(len(rows), dtype=np.bool_)
    out: Bools = column.codes[rows] == code
    return out
