"""TTLCache: expiry on the injected clock, no storing at TTL 0, bounded size."""

from __future__ import annotations

import pytest

from asched.base.clock import FakeClock
from asched.server.ttlcache import TTLCache


def test_entry_lives_until_its_ttl_and_not_at_it() -> None:
    clock = FakeClock()
    cache: TTLCache[str, int] = TTLCache(clock)
    cache.put("a", 1, 10.0)

    clock.advance(9.999)
    assert cache.get("a") == 1
    clock.advance(0.001)
    assert cache.get("a") is None
    assert len(cache) == 0


@pytest.mark.parametrize("ttl", [0.0, -1.0], ids=["zero", "negative"])
def test_ttl_zero_or_less_stores_nothing(ttl: float) -> None:
    cache: TTLCache[str, int] = TTLCache(FakeClock())
    cache.put("a", 1, ttl)
    assert cache.get("a") is None


def test_entries_have_their_own_ttls() -> None:
    clock = FakeClock()
    cache: TTLCache[str, int] = TTLCache(clock)
    cache.put("short", 1, 1.0)
    cache.put("long", 2, 5.0)
    clock.advance(2.0)
    assert (cache.get("short"), cache.get("long")) == (None, 2)


def test_put_again_renews_the_ttl() -> None:
    clock = FakeClock()
    cache: TTLCache[str, int] = TTLCache(clock)
    cache.put("a", 1, 10.0)
    clock.advance(8.0)
    cache.put("a", 2, 10.0)
    clock.advance(8.0)
    assert cache.get("a") == 2


def test_when_full_expired_entries_go_first_then_the_oldest() -> None:
    clock = FakeClock()
    cache: TTLCache[str, int] = TTLCache(clock, max_entries=3)
    cache.put("old", 1, 100.0)
    cache.put("expiring", 2, 1.0)
    cache.put("newer", 3, 100.0)
    clock.advance(1.0)

    cache.put("d", 4, 100.0)  # evicts "expiring" only
    assert [cache.get(k) for k in ("old", "newer", "d")] == [1, 3, 4]

    cache.put("e", 5, 100.0)  # nothing expired: the oldest insertion goes
    assert cache.get("old") is None
    assert [cache.get(k) for k in ("newer", "d", "e")] == [3, 4, 5]
    assert len(cache) == 3


def test_max_entries_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_entries must be at least 1, not 0"):
        TTLCache(FakeClock(), max_entries=0)
