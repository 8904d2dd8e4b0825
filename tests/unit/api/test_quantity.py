"""Quantity strings to integers as resource.Quantity's MilliValue and Value give them
(k8s.io/apimachinery/pkg/api/resource: both round toward +inf), checked against an
independent decimal reading, and the cached parse against a fresh one."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asched.api.quantity import QuantityError, parse_cpu_milli, parse_quantity

_SUFFIXES = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "e3": Decimal(10**3),
    "E-2": Decimal("1e-2"),
}


def _reference(text: str, scale: int) -> int:
    number, suffix = text, ""
    for s in sorted(_SUFFIXES, key=len, reverse=True):
        if s and text.endswith(s):
            number, suffix = text[: -len(s)], s
            break
    with localcontext() as ctx:
        ctx.prec = 60
        return math.ceil(Decimal(number) * _SUFFIXES[suffix] * scale)


_number = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.tuples(st.integers(0, 9999), st.integers(0, 999)).map(lambda t: f"{t[0]}.{t[1]:03d}"),
)
_quantity = st.tuples(_number, st.sampled_from(sorted(_SUFFIXES))).map("".join)


@given(_quantity)
def test_milli_and_base_values_round_up_as_resource_quantity(text: str) -> None:
    assert parse_cpu_milli(text) == _reference(text, 1000)
    assert parse_quantity(text) == _reference(text, 1)
    # The second reading comes from the cache and must be the same number.
    assert parse_cpu_milli(text) == _reference(text, 1000)
    assert parse_quantity(text) == _reference(text, 1)


@pytest.mark.parametrize(
    ("text", "milli", "base"),
    [
        ("100m", 100, 1),  # Value of 0.1 rounds up to 1
        ("1", 1000, 1),
        ("1.5Gi", 1610612736000, 1610612736),
        ("2e3", 2_000_000, 2000),
        ("1n", 1, 1),  # MilliValue of a nano rounds up too
        ("0", 0, 0),
    ],
)
def test_known_values(text: str, milli: int, base: int) -> None:
    assert (parse_cpu_milli(text), parse_quantity(text)) == (milli, base)


@pytest.mark.parametrize("text", ["", "1x", "Gi", "1.2.3", "--1", "1 Gi"])
def test_a_malformed_quantity_is_an_error_each_time_it_is_read(text: str) -> None:
    for _ in range(2):  # a failure is not cached as a value
        with pytest.raises(QuantityError, match="not a valid Kubernetes quantity"):
            parse_cpu_milli(text)
        with pytest.raises(QuantityError, match="not a valid Kubernetes quantity"):
            parse_quantity(text)
