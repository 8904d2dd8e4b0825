"""SortedScoredNodes pops exactly what Go's container/heap pops, ties included."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from asched.framework.sorted_nodes import SortedScoredNodes
from asched.scheduler.algorithm import go_heap_top


class GoHeap:
    """container/heap's Init, Pop and down, literally, over (id, total) with
    nodeScoreHeap.Less = higher total (no Randomizer); Push-then-Init as
    NewSortedScoredNodes(append(UnorderedList(), entry)) does it."""

    def __init__(self, ids: list[int], totals: list[int]) -> None:
        self.h = list(zip(ids, totals, strict=True))
        self.init()

    def less(self, i: int, j: int) -> bool:
        return self.h[i][1] > self.h[j][1]

    def down(self, i0: int, n: int) -> None:
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n or j1 < 0:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and self.less(j2, j1):
                j = j2
            if not self.less(j, i):
                break
            self.h[i], self.h[j] = self.h[j], self.h[i]
            i = j

    def init(self) -> None:
        n = len(self.h)
        for i in range(n // 2 - 1, -1, -1):
            self.down(i, n)

    def pop(self) -> int:
        n = len(self.h) - 1
        self.h[0], self.h[n] = self.h[n], self.h[0]
        self.down(0, n)
        return self.h.pop()[0]

    def append_and_init(self, entry: int, total: int) -> None:
        self.h.append((entry, total))
        self.init()


# Few distinct totals, so ties at every depth are the rule.
TOTALS = st.lists(st.integers(0, 4), min_size=1, max_size=70)
OPS = st.lists(st.one_of(st.just(None), st.integers(0, 4)), max_size=40)


@given(TOTALS, OPS)
def test_pops_and_reinserts_agree_with_container_heap(
    totals: list[int], ops: list[int | None]
) -> None:
    """None pops; a number appends a new entry with that total (the rescored node)."""
    ours = SortedScoredNodes(range(len(totals)), totals)
    go = GoHeap(list(range(len(totals))), totals)
    next_id = len(totals)
    for op in ops:
        if op is None:
            if not len(ours):
                continue
            assert ours.pop() == go.pop()
        else:
            ours.push_and_init(next_id, op)
            go.append_and_init(next_id, op)
            next_id += 1
        assert ours.unordered() == [e for e, _ in go.h]
        assert ours.totals() == [t for _, t in go.h]
    while len(ours):
        assert ours.pop() == go.pop()
    assert not go.h


@given(TOTALS)
def test_first_pop_is_the_algorithms_pick(totals: list[int]) -> None:
    """The ranking a batch keeps starts from the node schedulePod chose (go_heap_top)."""
    first = SortedScoredNodes(range(len(totals)), totals).pop()
    assert first == go_heap_top(np.asarray(totals, dtype=np.int64))


def test_a_changed_total_needs_the_full_init() -> None:
    """push_and_init assumes the kept totals did not change; a full Init is what Go does
    when normalization moved them, and it orders differently."""
    heap = SortedScoredNodes(range(4), [5, 5, 5, 5])
    assert heap.pop() == 0
    # Rebuilt with new totals for the kept entries (3, 1, 2 in heap order) and a new one.
    ids = [*heap.unordered(), 9]
    rebuilt = SortedScoredNodes(ids, [1, 7, 1, 7])
    go = GoHeap(ids, [1, 7, 1, 7])
    assert [rebuilt.pop() for _ in range(4)] == [go.pop() for _ in range(4)]
