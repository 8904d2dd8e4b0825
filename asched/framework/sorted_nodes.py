"""kube-scheduler's SortedScoredNodes: scored nodes in a container/heap, best total first.

schedulePod puts the scored nodes into a binary heap (NewSortedScoredNodes: heap.Init)
and pops the best. Opportunistic batching keeps the rest of that heap for the next pod of
the same signature, pops again, and - when the node it just used is still feasible -
appends that node with fresh scores and heap.Inits the whole list again. Which of several
nodes with equal totals comes out first depends on the exact order container/heap leaves
them in, so this is container/heap's algorithm (Init, down, Pop), not Python's heapq,
whose sift differs on ties. nodeScoreHeap.Less is "higher TotalScore"; its Randomizer
tie-break is only set by extenders, and a profile with extenders runs no batching.

Entries are ints (the caller's ids for the nodes); their totals are kept beside them.
"""

from __future__ import annotations

from collections.abc import Sequence


class SortedScoredNodes:
    __slots__ = ("_ids", "_totals")

    def __init__(self, ids: Sequence[int], totals: Sequence[int]) -> None:
        """heap.Init over the entries in the given order."""
        self._ids = list(ids)
        self._totals = list(totals)
        n = len(self._ids)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def __len__(self) -> int:
        return len(self._ids)

    def unordered(self) -> list[int]:
        """UnorderedList: the ids in the heap's internal order."""
        return list(self._ids)

    def totals(self) -> list[int]:
        """The totals, parallel to unordered()."""
        return list(self._totals)

    def pop(self) -> int:
        """heap.Pop: the best total's id (ties as container/heap leaves them)."""
        ids, totals = self._ids, self._totals
        n = len(ids) - 1
        ids[0], ids[n] = ids[n], ids[0]
        totals[0], totals[n] = totals[n], totals[0]
        self._down(0, n)
        totals.pop()
        return ids.pop()

    def push_and_init(self, entry: int, total: int) -> None:
        """NewSortedScoredNodes(append(UnorderedList(), entry)) when the other entries kept
        their totals: heap.Init over a valid heap plus one appended entry. Init's down()
        changes nothing at a node whose subtree lacks the new entry (no child there is
        better than its parent), so only the new entry's ancestors, bottom-up, need it -
        the same result in O(log^2 n) instead of O(n)."""
        self._ids.append(entry)
        self._totals.append(total)
        n = len(self._ids)
        i = n - 1
        while i > 0:
            i = (i - 1) // 2
            self._down(i, n)

    def _down(self, i0: int, n: int) -> None:
        """container/heap's down with Less(i, j) = totals[i] > totals[j]."""
        ids, totals = self._ids, self._totals
        i = i0
        while True:
            j = 2 * i + 1
            if j >= n:
                break
            j2 = j + 1
            if j2 < n and totals[j2] > totals[j]:
                j = j2
            if not totals[j] > totals[i]:
                break
            ids[i], ids[j] = ids[j], ids[i]
            totals[i], totals[j] = totals[j], totals[i]
            i = j
