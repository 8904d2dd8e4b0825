"""Values Go parses its own way: Gt/Lt label values (strconv.ParseInt) and toleration
operators (core/v1 Toleration.ToleratesTaint, v1.37)."""

from __future__ import annotations

import pytest

from asched.api.labels import GT, LT, Requirement, parse_int64
from asched.api.pod import Toleration


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("42", 42),
        ("-7", -7),
        ("+7", 7),
        ("007", 7),
        (" 7", None),
        ("7 ", None),
        ("1_000", None),
        ("٣", None),  # an Arabic-Indic digit: int() takes it, ParseInt does not
        ("", None),
        ("-", None),
        ("9223372036854775807", 9223372036854775807),
        ("9223372036854775808", None),
        ("-9223372036854775808", -9223372036854775808),
        ("1e3", None),
    ],
)
def test_parse_int64_is_go_parse_int(text: str, want: int | None) -> None:
    assert parse_int64(text) == want


@pytest.mark.parametrize(
    ("op", "value", "label", "matches"),
    [
        (GT, "5", "6", True),
        (GT, "5", "5", False),
        (LT, "5", "4", True),
        (GT, "5", "1_0", False),  # not an integer to Go
        (GT, "5", " 10", False),
        (LT, "+5", "4", True),
    ],
)
def test_gt_lt_requirements(op: str, value: str, label: str, matches: bool) -> None:
    assert Requirement("k", op, frozenset({value})).matches({"k": label}) is matches


@pytest.mark.parametrize(
    ("operator", "value", "tolerates"),
    [
        ("Equal", "v", True),
        ("", "v", True),
        ("Equal", "other", False),
        ("Exists", "", True),
        ("Lt", "v", False),  # comparison operators are alpha and off in 1.37
        ("Gt", "v", False),
        ("Bogus", "v", False),  # unknown operators tolerate nothing
    ],
)
def test_toleration_operators(operator: str, value: str, tolerates: bool) -> None:
    t = Toleration(key="k", operator=operator, value=value, effect="NoSchedule")
    assert t.tolerates("k", "v", "NoSchedule") is tolerates
