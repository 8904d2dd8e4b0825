"""A keyed binary min-heap: the data structure under the active and backoff queues.

Mirrors kube-scheduler's backend/heap: every entry knows its index, so an item can be
removed or re-placed after a change in O(log n) without leaving stale entries behind.
(A `heapq` with lazy deletion would be faster per operation, but its dead entries keep
pointing at QueuedPodInfos that the queue later mutates - a new backoff expiry, a new
pod version - which silently breaks the heap order.)

Guarantees: one entry per key; `pop` returns the item that `before` ranks first; items
that `before` ranks equal come out in the order they were first pushed (FIFO), and
re-placing an item after a change keeps its place among its equals. An item's ordering
fields must not change while it is in the heap unless `push`/`fix` is called right after.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("index", "item", "key", "seq")

    def __init__(self, key: str, item: T, seq: int, index: int) -> None:
        self.key = key
        self.item = item
        self.seq = seq
        self.index = index


class KeyedHeap(Generic[T]):
    """Min-heap ordered by `before(a, b)` ("a comes first"), one item per key."""

    def __init__(self, before: Callable[[T, T], bool]) -> None:
        self._before = before
        self._heap: list[_Entry[T]] = []
        self._by_key: dict[str, _Entry[T]] = {}
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def get(self, key: str) -> T | None:
        entry = self._by_key.get(key)
        return None if entry is None else entry.item

    def push(self, key: str, item: T) -> None:
        """Add the item, or replace the key's item and re-place it (kube-scheduler AddOrUpdate)."""
        entry = self._by_key.get(key)
        if entry is not None:
            entry.item = item
            self._fix(entry.index)
            return
        entry = _Entry(key, item, next(self._seq), len(self._heap))
        self._by_key[key] = entry
        self._heap.append(entry)
        self._sift_up(entry.index)

    def fix(self, key: str) -> None:
        """Re-place the key's item after its ordering fields changed in place."""
        entry = self._by_key.get(key)
        if entry is not None:
            self._fix(entry.index)

    def remove(self, key: str) -> T | None:
        entry = self._by_key.pop(key, None)
        if entry is None:
            return None
        last = self._heap.pop()
        if last is not entry:
            self._heap[entry.index] = last
            last.index = entry.index
            self._fix(last.index)
        return entry.item

    def peek(self) -> T | None:
        return self._heap[0].item if self._heap else None

    def pop(self) -> T:
        """Remove and return the first item; IndexError when empty."""
        if not self._heap:
            raise IndexError("pop from an empty heap")
        first = self._heap[0]
        self.remove(first.key)
        return first.item

    def items(self) -> Iterator[T]:
        """The items, in no particular order."""
        return (e.item for e in self._heap)

    def _lt(self, a: _Entry[T], b: _Entry[T]) -> bool:
        if self._before(a.item, b.item):
            return True
        if self._before(b.item, a.item):
            return False
        return a.seq < b.seq

    def _fix(self, pos: int) -> None:
        if self._sift_up(pos) == pos:
            self._sift_down(pos)

    def _sift_up(self, pos: int) -> int:
        heap = self._heap
        entry = heap[pos]
        while pos > 0:
            parent_pos = (pos - 1) >> 1
            parent = heap[parent_pos]
            if not self._lt(entry, parent):
                break
            heap[pos] = parent
            parent.index = pos
            pos = parent_pos
        heap[pos] = entry
        entry.index = pos
        return pos

    def _sift_down(self, pos: int) -> None:
        heap = self._heap
        n = len(heap)
        entry = heap[pos]
        while True:
            child_pos = 2 * pos + 1
            if child_pos >= n:
                break
            right = child_pos + 1
            if right < n and self._lt(heap[right], heap[child_pos]):
                child_pos = right
            child = heap[child_pos]
            if not self._lt(child, entry):
                break
            heap[pos] = child
            child.index = pos
            pos = child_pos
        heap[pos] = entry
        entry.index = pos
