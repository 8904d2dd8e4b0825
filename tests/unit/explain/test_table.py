from __future__ import annotations

import pytest

from asched.explain.table import format_table


@pytest.mark.parametrize(
    ("headers", "rows", "want"),
    [
        (("A", "B"), [], ["A  B"]),
        (
            ("NODE", "WHY"),
            [["n1", "x"], ["node-22", "long reason"]],
            ["NODE     WHY", "n1       x", "node-22  long reason"],
        ),
        # The last column is not padded, so no line ends in spaces.
        (("A", "B", "C"), [["1", "", ""], ["22", "333", "4"]], ["A   B    C", "1", "22  333  4"]),
    ],
    ids=["header-only", "aligned", "no-trailing-spaces"],
)
def test_format_table(headers: tuple[str, ...], rows: list[list[str]], want: list[str]) -> None:
    assert format_table(headers, rows) == want


def test_a_row_of_the_wrong_width_is_an_error() -> None:
    with pytest.raises(ValueError, match="2 cells"):
        format_table(("A", "B", "C"), [["1", "2"]])
