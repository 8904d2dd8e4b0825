"""capacity.fits_plain, the integer form of CmpRequestOverCapacity for devices without
request policies, must answer exactly what the Fraction form `fits` answers: the same
bool, or the same CapacityError, for whole and fractional quantities alike."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api.dra import CapacityRequestPolicy, Device, DeviceCapacity
from asched.plugins.dynamicresources.capacity import (
    CapacityError,
    fits,
    fits_plain,
    plain_capacity,
)

NAMES = ("memory", "millicores", "cores")

# Quantities as the API holds them: whole values (most), milli and nano fractions, a few
# negative (a stored object from before stricter validation), and big ones near int64.
amounts = st.one_of(
    st.integers(min_value=-3, max_value=2**63),
    st.builds(Fraction, st.integers(min_value=-2000, max_value=10**6), st.just(1000)),
    st.builds(Fraction, st.integers(min_value=0, max_value=10**12), st.just(10**9)),
)
capacities = st.dictionaries(st.sampled_from(NAMES), amounts, max_size=3)
consumed = st.dictionaries(st.sampled_from(NAMES), amounts, max_size=3)
requests = st.one_of(
    st.none(), st.dictionaries(st.sampled_from((*NAMES, "other")), amounts, max_size=3)
)


def _device(values: dict[str, Fraction | int]) -> Device:
    return Device(
        "d",
        allow_multiple_allocations=True,
        consumable={k: DeviceCapacity(Fraction(v)) for k, v in values.items()},
    )


def _answer(call: Callable[[], bool]) -> bool | tuple[str, str]:
    try:
        return call()
    except CapacityError as exc:
        return ("error", str(exc))


def _both(
    values: dict[str, Fraction | int],
    wanted: dict[str, Fraction | int] | None,
    allocated: dict[str, Fraction | int],
    allocating: dict[str, Fraction | int],
) -> tuple[bool | tuple[str, str], bool | tuple[str, str]]:
    """What `fits` and `fits_plain` answer for one device and request."""
    device = _device(values)
    plain = plain_capacity(device)
    assert plain is not None
    req = None if wanted is None else {k: Fraction(v) for k, v in wanted.items()}
    done = {k: Fraction(v) for k, v in allocated.items()}
    doing = {k: Fraction(v) for k, v in allocating.items()}
    return (
        _answer(lambda: fits(req, device, done, doing)),
        _answer(lambda: fits_plain(req, device, plain, done, doing)),
    )


@settings(max_examples=600, deadline=None)
@given(capacities, requests, consumed, consumed)
def test_fits_plain_agrees_with_fits(
    values: dict[str, Fraction | int],
    wanted: dict[str, Fraction | int] | None,
    allocated: dict[str, Fraction | int],
    allocating: dict[str, Fraction | int],
) -> None:
    by_fraction, by_int = _both(values, wanted, allocated, allocating)
    assert by_int == by_fraction


@pytest.mark.parametrize(
    ("values", "wanted", "allocated", "expected"),
    [
        pytest.param({"memory": 10}, None, {}, True, id="no-request-takes-all"),
        pytest.param({"memory": 10}, None, {"memory": 1}, False, id="no-request-after-a-share"),
        pytest.param({"memory": 10}, {"memory": 4}, {"memory": 6}, True, id="exactly-full"),
        pytest.param({"memory": 10}, {"memory": 5}, {"memory": 6}, False, id="over"),
        pytest.param({"memory": 10}, {"cores": 1}, {}, False, id="unknown-capacity"),
        pytest.param(
            {"memory": Fraction(1, 2)}, {"memory": Fraction(1, 4)}, {}, True, id="fractional"
        ),
    ],
)
def test_fits_plain_cases(
    values: dict[str, Fraction | int],
    wanted: dict[str, Fraction | int] | None,
    allocated: dict[str, Fraction | int],
    expected: bool,
) -> None:
    assert _both(values, wanted, allocated, {}) == (expected, expected)


def test_negative_capacity_is_an_error_in_both() -> None:
    device = _device({"memory": -1})
    plain = plain_capacity(device)
    assert plain is not None
    assert not plain.nonnegative
    for check in (
        lambda: fits(None, device, {}, {}),
        lambda: fits_plain(None, device, plain, {}, {}),
    ):
        with pytest.raises(CapacityError, match='capacity "memory": capacity value is negative'):
            check()


def test_a_policy_keeps_the_fraction_path() -> None:
    device = Device(
        "d",
        consumable={"memory": DeviceCapacity(Fraction(10), CapacityRequestPolicy(Fraction(1)))},
    )
    assert plain_capacity(device) is None
