"""The annotation grammars: every parser separates "not given", valid and malformed."""

from __future__ import annotations

import pytest

from asched_policies.policy_annotations import (
    Malformed,
    Place,
    parse_fraction,
    parse_location,
    parse_non_negative_int,
    parse_regions,
)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(None, frozenset(), id="absent"),
        pytest.param("", frozenset(), id="empty"),
        pytest.param("a", frozenset({"a"}), id="one"),
        pytest.param(" a ,b,, a ", frozenset({"a", "b"}), id="blanks-duplicates-empties"),
    ],
)
def test_parse_regions(value: str | None, want: frozenset[str]) -> None:
    assert parse_regions(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("0", 0, id="zero"),
        pytest.param(" 535 ", 535, id="trimmed"),
        pytest.param("", Malformed(""), id="empty"),
        pytest.param("-1", Malformed("-1"), id="negative"),
        pytest.param("5.0", Malformed("5.0"), id="decimal"),
        pytest.param("\u0665", Malformed("\u0665"), id="non-ascii-digit"),
    ],
)
def test_parse_non_negative_int(value: str | None, want: int | Malformed | None) -> None:
    assert parse_non_negative_int(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("0", 0.0, id="zero"),
        pytest.param("1", 1.0, id="one"),
        pytest.param("0.42", 0.42, id="fraction"),
        pytest.param("1e-2", 0.01, id="exponent"),
        pytest.param("1.01", Malformed("1.01"), id="above-one"),
        pytest.param("-0.5", Malformed("-0.5"), id="negative"),
        pytest.param("NaN", Malformed("NaN"), id="nan"),
        pytest.param("42%", Malformed("42%"), id="percent"),
    ],
)
def test_parse_fraction(value: str | None, want: float | Malformed | None) -> None:
    assert parse_fraction(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("cn-north/cn-north-1a", Place("cn-north", "cn-north-1a"), id="region-zone"),
        pytest.param("cn-north", Place("cn-north"), id="region-only"),
        pytest.param(" cn-north / 1a ", Place("cn-north", "1a"), id="trimmed"),
        pytest.param("", Malformed(""), id="empty"),
        pytest.param("/1a", Malformed("/1a"), id="no-region"),
        pytest.param("cn-north/", Malformed("cn-north/"), id="no-zone-after-slash"),
        pytest.param("a/b/c", Malformed("a/b/c"), id="three-parts"),
    ],
)
def test_parse_location(value: str | None, want: Place | Malformed | None) -> None:
    assert parse_location(value) == want
