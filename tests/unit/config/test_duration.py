from __future__ import annotations

import pytest

from asched.config import DurationError, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("15s", 15.0, id="seconds"),
        pytest.param("1m30s", 90.0, id="minutes-and-seconds"),
        pytest.param("1.5h", 5400.0, id="fractional-hours"),
        pytest.param("300ms", 0.3, id="milliseconds"),
        pytest.param("2500ms", 2.5, id="milliseconds-over-a-second"),
        pytest.param("10us", 10e-6, id="microseconds-ascii"),
        pytest.param("10\u00b5s", 10e-6, id="microseconds-micro-sign"),
        pytest.param("10\u03bcs", 10e-6, id="microseconds-greek-mu"),
        pytest.param("100ns", 100e-9, id="nanoseconds"),
        pytest.param(".5s", 0.5, id="leading-dot"),
        pytest.param("-2s", -2.0, id="negative"),
        pytest.param("+3s", 3.0, id="explicit-plus"),
        pytest.param("0", 0.0, id="bare-zero"),
        pytest.param("1h2m3.5s", 3723.5, id="all-units-combined"),
    ],
)
def test_parses_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "invalid duration", id="empty"),
        pytest.param("15", "missing unit", id="number-without-unit"),
        pytest.param("1s2", "missing unit", id="trailing-number"),
        pytest.param("1d", "unknown unit", id="days-are-not-a-unit"),
        pytest.param("s", "invalid duration", id="unit-without-number"),
        pytest.param(".s", "invalid duration", id="dot-without-digits"),
        pytest.param("-", "invalid duration", id="sign-only"),
        pytest.param("9223372037s", "invalid duration", id="overflows-int64-nanoseconds"),
    ],
)
def test_rejects_what_go_rejects(text: str, message: str) -> None:
    with pytest.raises(DurationError, match=message):
        parse_duration(text)
