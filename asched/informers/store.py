"""Store: an informer's cache of one resource, keyed `namespace/name` (or `name`).

Implements asched.framework.listers.ObjectStore for plugins and the scheduler. Only the
informer that owns a store writes to it (`upsert`, `remove`, `mark_synced`; plugins see
the read-only ObjectStore protocol); everyone else reads.
Objects in it are the same instances the event handlers received and must be treated as
immutable: a change arrives as a new object from a new event, never as a mutation.

Every store keeps its objects by namespace too (`in_namespace`, client-go's namespace
index, from the key itself). Further indexers (client-go's cache.Indexers): a named
function from an object to the index value it files under ("" for none), kept current on
every upsert and remove, so `by_index("group", "ns1/g")` answers without scanning the store.

Listeners (client-go's AddEventHandler on a shared informer, as Go's DRA manager registers
its allocated-devices tracker on the claims' assume cache): told `(old, new)` of every
change the moment the store makes it, whoever writes (the informer's watch and relist, a
test, a benchmark), so a reader can keep something derived from the store current in
O(changes) instead of listing it again.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")
IndexFn = Callable[[T], str]
# (old, new): (None, obj) for an add, (old, obj) for an update, (obj, None) for a delete.
Listener = Callable[[T | None, T | None], None]


class Store(Generic[T]):
    __slots__ = (
        "_by_namespace",
        "_indexers",
        "_indices",
        "_items",
        "_listeners",
        "_rvs",
        "_synced",
    )

    def __init__(self, indexers: Mapping[str, IndexFn[T]] | None = None) -> None:
        self._items: dict[str, T] = {}
        # resourceVersion per key, so a relist can tell unchanged objects from changed ones.
        self._rvs: dict[str, str] = {}
        self._synced = False
        self._indexers: dict[str, IndexFn[T]] = dict(indexers or {})
        # index name -> index value -> key -> object
        self._indices: dict[str, dict[str, dict[str, T]]] = {n: {} for n in self._indexers}
        # namespace -> key -> object, from the `namespace/name` key itself (client-go's
        # namespace index, which every namespaced lister uses), so a plugin asking for the
        # objects of one namespace never scans the whole cluster's.
        self._by_namespace: dict[str, dict[str, T]] = {}
        self._listeners: builtins.list[Listener[T]] = []

    def add_listener(self, listener: Listener[T]) -> None:
        """Call `listener(old, new)` after every later change (none for what the store
        already holds: the caller reads `list()` first). It runs synchronously inside the
        write, so it must be quick and must not write to the store."""
        self._listeners.append(listener)

    def by_index(self, index: str, value: str) -> Mapping[str, T]:
        """The objects filed under `value` by indexer `index`, by key. Read only."""
        found = self._indices[index].get(value)
        return found if found is not None else {}

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def in_namespace(self, namespace: str) -> Mapping[str, T]:
        """The objects of one namespace, by key (none for cluster-scoped ones). Read only."""
        found = self._by_namespace.get(namespace)
        return found if found is not None else {}

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
        namespace, slash, _ = key.partition("/")
        if slash:
            self._by_namespace.setdefault(namespace, {})[key] = obj
        if self._indexers:
            if old is not None:
                self._unindex(key, old)
            self._index(key, obj)
        for listener in self._listeners:
            listener(old, obj)
        return old

    def remove(self, key: str) -> T | None:
        self._rvs.pop(key, None)
        old = self._items.pop(key, None)
        namespace, slash, _ = key.partition("/")
        bucket = self._by_namespace.get(namespace) if slash else None
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del self._by_namespace[namespace]
        if old is not None:
            if self._indexers:
                self._unindex(key, old)
            for listener in self._listeners:
                listener(old, None)
        return old

    def _index(self, key: str, obj: T) -> None:
        for name, fn in self._indexers.items():
            value = fn(obj)
            if value:
                self._indices[name].setdefault(value, {})[key] = obj

    def _unindex(self, key: str, obj: T) -> None:
        for name, fn in self._indexers.items():
            value = fn(obj)
            bucket = self._indices[name].get(value) if value else None
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del self._indices[name][value]

    def mark_synced(self) -> None:
        self._synced = True
