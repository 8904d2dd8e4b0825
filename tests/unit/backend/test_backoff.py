"""backoffQueue's arithmetic without a queue: record_failure, backing_off, the windows."""

from __future__ import annotations

import pytest

from asched.backend.backoff import align_to_window, backing_off, record_failure
from asched.framework.types import QueuedPodInfo
from tests.builders import make_pod


def _failed(history: str, now: float, *, maximum: float = 10.0) -> QueuedPodInfo:
    qpi = QueuedPodInfo(pod=make_pod("p").obj(), timestamp=0.0)
    for outcome in history:
        record_failure(qpi, now, rejected=outcome == "U", initial=1.0, maximum=maximum)
    return qpi


@pytest.mark.parametrize(
    ("history", "now", "counts", "expiry"),
    [
        # U: plugins rejected the attempt (a FitError, Reserve, Permit, WaitOnPermit);
        # E: an error (the API server, PreBind, Bind, a plugin's error status).
        pytest.param("U", 100.0, (1, 0), 101.0, id="first-rejection-one-second"),
        pytest.param("UUUU", 100.0, (4, 0), 108.0, id="rejections-double"),
        pytest.param("UUUUUU", 100.0, (6, 0), 110.0, id="capped-at-max"),
        pytest.param("E", 100.0, (0, 1), 101.0, id="first-error-one-second"),
        pytest.param("UUUE", 100.0, (3, 1), 101.0, id="errors-count-from-one"),
        pytest.param("UUUEEU", 100.0, (4, 0), 108.0, id="a-rejection-resets-errors"),
        pytest.param("EEEU", 100.0, (1, 0), 101.0, id="errors-leave-unschedulable-alone"),
        # getBackoffTime truncates timestamp + duration to its 1-second window.
        pytest.param("UU", 100.7, (2, 0), 102.0, id="aligned-down-to-the-window"),
    ],
)
def test_record_failure_follows_get_backoff_time(
    history: str, now: float, counts: tuple[int, int], expiry: float
) -> None:
    qpi = _failed(history, now)
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == counts
    assert qpi.timestamp == now
    assert qpi.backoff_expiry == expiry


def test_zero_max_backoff_means_no_backoff() -> None:
    qpi = _failed("UUU", 100.0, maximum=0.0)
    assert qpi.backoff_expiry == 0.0
    assert not backing_off(qpi, 100.0)


@pytest.mark.parametrize(
    ("expiry", "now", "want"),
    [
        # isEntityBackingoff: still backing off while the expiry is not before the start
        # of the current window, so a whole window leaves together on its aligned tick.
        pytest.param(101.0, 100.5, True, id="before-expiry"),
        pytest.param(101.0, 101.9, True, id="in-the-expiry-window"),
        pytest.param(101.0, 102.0, False, id="next-window"),
    ],
)
def test_backing_off_uses_whole_windows(expiry: float, now: float, want: bool) -> None:
    qpi = QueuedPodInfo(pod=make_pod("p").obj(), timestamp=0.0, backoff_expiry=expiry)
    assert backing_off(qpi, now) is want
    assert align_to_window(now) == float(int(now))
