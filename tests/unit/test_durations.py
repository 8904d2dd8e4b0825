"""go_duration against Go's time.Duration.String (values from Go's own format tests)."""

from __future__ import annotations

import pytest

from asched.base.durations import go_duration


@pytest.mark.parametrize(
    ("seconds", "want"),
    [
        (0, "0s"),
        (1e-9, "1ns"),
        (1.1e-6, "1.1µs"),
        (2.2e-3, "2.2ms"),
        (0.5, "500ms"),
        (1, "1s"),
        (1.5, "1.5s"),
        (10, "10s"),
        (60, "1m0s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (3661.25, "1h1m1.25s"),
        (-90, "-1m30s"),
        (300, "5m0s"),
    ],
)
def test_go_duration(seconds: float, want: str) -> None:
    assert go_duration(seconds) == want
