"""Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`) as exact integers.

Mirrors k8s.io/apimachinery resource.Quantity: CPU is kept in millicores and everything
else in base units, both rounded up (Quantity.MilliValue / Value round toward +inf).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def _exact(text: str) -> Fraction:
    m = _RE.match(text.strip())
    if m is None:
        raise QuantityError(f"quantity {text!r} is not a valid Kubernetes quantity")
    number, suffix = Fraction(m.group(1)), m.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    return number * Fraction(10) ** int(suffix[1:])


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


# Every pod decoded parses its requests; a cluster spells them with a handful of strings
# ("100m", "1Gi"), so the rounded integers are cached too, not only the exact fractions
# (the Fraction arithmetic was 1 % of asched's CPU in the basic benchmark).
@lru_cache(maxsize=4096)
def _base(text: str) -> int:
    return _ceil(_exact(text))


@lru_cache(maxsize=4096)
def _milli(text: str) -> int:
    return _ceil(_exact(text) * 1000)


def parse_quantity(value: str | int | float) -> int:
    """The quantity in base units, rounded up (bytes for memory, count for pods)."""
    if isinstance(value, bool):
        raise QuantityError(f"quantity {value!r} is not a valid Kubernetes quantity")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _ceil(Fraction(value))
    return _base(value)


def parse_quantity_exact(value: str | int) -> Fraction:
    """The quantity exactly (DRA counters and consumable capacity compare
    resource.Quantity values with Cmp, so nothing may be rounded)."""
    if isinstance(value, bool):
        raise QuantityError(f"quantity {value!r} is not a valid Kubernetes quantity")
    if isinstance(value, int):
        return Fraction(value)
    return _exact(value)


def parse_cpu_milli(value: str | int | float) -> int:
    """The quantity in thousandths, rounded up (millicores for cpu)."""
    if isinstance(value, bool):
        raise QuantityError(f"quantity {value!r} is not a valid Kubernetes quantity")
    if isinstance(value, int):
        return value * 1000
    if isinstance(value, float):
        return _ceil(Fraction(value) * 1000)
    return _milli(value)


def format_quantity(value: Fraction) -> str:
    """A quantity string for an exact value: an integer as such, otherwise in milli or
    nano units (the API server stores the value, so any exact spelling will do).
    Raises QuantityError for a value finer than a nano unit, which no quantity holds."""
    for scale, suffix in ((1, ""), (10**3, "m"), (10**9, "n")):
        scaled = value * scale
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    raise QuantityError(f"quantity {value} is finer than 1n")
