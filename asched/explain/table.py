"""Plain-text tables for the command line: aligned columns, no colours, no terminal needed.

Output must read the same in a terminal, a pipe and a CI log, so this is deliberately
dumb: every column but the last is padded to its widest cell, and the last is not padded
(a long reason stays on one line instead of pushing trailing spaces).
"""

from __future__ import annotations

from collections.abc import Sequence

GAP = "  "


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The table as lines: a header line, then one line per row."""
    widths = [len(h) for h in headers]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, the table {len(headers)} columns")
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    last = len(headers) - 1

    def line(cells: Sequence[str]) -> str:
        padded = [c if i == last else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return GAP.join(padded).rstrip()

    return [line(headers), *(line(r) for r in rows)]
