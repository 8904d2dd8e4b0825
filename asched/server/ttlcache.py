"""A bounded cache whose entries expire after a per-entry time to live, on an injected clock.

Delegated authentication and authorization cache the API server's answers for a few
seconds (k8s.io/apiserver token/cache/cached_token_authenticator.go and
authorization/webhook: 10 s by default), so a Prometheus scrape every 15 s costs at most
one TokenReview and one SubjectAccessReview, and a flood of requests with random tokens
costs memory no larger than `max_entries`.

Guarantees: an entry is never returned at or after its expiry; a TTL of 0 or less stores
nothing (the apiserver's "0 disables the cache"); when full, expired entries go first, then
the oldest insertions.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from asched.base.clock import Clock

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_MAX_ENTRIES = 4096


class TTLCache(Generic[K, V]):
    def __init__(self, clock: Clock, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        self._clock = clock
        self._max = max_entries
        # key -> (expiry, value), in insertion order (a re-put moves the key to the end).
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expiry, value = entry
        if self._clock.now() >= expiry:
            del self._entries[key]
            return None
        return value

    def put(self, key: K, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        self._entries.pop(key, None)
        if len(self._entries) >= self._max:
            self._evict()
        self._entries[key] = (self._clock.now() + ttl, value)

    def _evict(self) -> None:
        now = self._clock.now()
        for key in [k for k, (expiry, _) in self._entries.items() if now >= expiry]:
            del self._entries[key]
        while len(self._entries) >= self._max:
            self._entries.popitem(last=False)
