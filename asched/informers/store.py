"""Store: an informer's cache of one resource, keyed `namespace/name` (or `name`).

Implements asched.framework.listers.ObjectStore for plugins and the scheduler. Only the
informer that owns a store writes to it (`upsert`, `remove`, `mark_synced`; plugins see
the read-only ObjectStore protocol); everyone else reads.
Objects in it are the same instances the event handlers received and must be treated as
immutable: a change arrives as a new object from a new event, never as a mutation.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Store(Generic[T]):
    __slots__ = ("_items", "_rvs", "_synced")

    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        # resourceVersion per key, so a relist can tell unchanged objects from changed ones.
        self._rvs: dict[str, str] = {}
        self._synced = False

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def list(self) -> builtins.list[T]:
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        return list(self._items)

    def resource_version(self, key: str) -> str | None:
        return self._rvs.get(key)

    def has_synced(self) -> bool:
        """True once the first LIST has been delivered to the handler."""
        return self._synced

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    # -- written by the owning informer only; plugins see the read-only ObjectStore ----

    def upsert(self, key: str, obj: T, rv: str) -> T | None:
        old = self._items.get(key)
        self._items[key] = obj
        self._rvs[key] = rv
        return old

    def remove(self, key: str) -> T | None:
        self._rvs.pop(key, None)
        return self._items.pop(key, None)

    def mark_synced(self) -> None:
        self._synced = True
