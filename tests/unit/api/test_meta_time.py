"""asched.api.meta.micro_time against the datetime formatting it replaces: the same text
for every instant, rounding included (half to even, carried into the next second)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import example, given
from hypothesis import strategies as st

from asched.api.meta import micro_time


def _reference(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@given(st.floats(min_value=-2e9, max_value=4e9, allow_nan=False))
@example(1796514061.9999996)  # rounds up into the next second
@example(1796514061.0000004)
@example(0.0000005)  # exactly half a microsecond: to even (0)
@example(-0.25)
@example(1796514061.0)
def test_micro_time_is_the_datetime_text(wall: float) -> None:
    assert micro_time(wall) == _reference(wall)


def test_consecutive_instants_in_one_second_share_its_text() -> None:
    assert micro_time(1796514061.25) == "2026-12-05T23:41:01.250000Z"
    assert micro_time(1796514061.5) == "2026-12-05T23:41:01.500000Z"
    assert micro_time(1796514062.000001) == "2026-12-05T23:41:02.000001Z"
