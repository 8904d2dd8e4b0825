"""KeyedHeap: order, FIFO among equals, in-place updates and removals."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from asched.backend.heap import KeyedHeap


@dataclass
class Item:
    key: str
    rank: int


def _by_rank(a: Item, b: Item) -> bool:
    return a.rank < b.rank


def _drain(heap: KeyedHeap[Item]) -> list[str]:
    out = []
    while heap:
        out.append(heap.pop().key)
    return out


def _heap(*items: tuple[str, int]) -> KeyedHeap[Item]:
    heap: KeyedHeap[Item] = KeyedHeap(_by_rank)
    for key, rank in items:
        heap.push(key, Item(key, rank))
    return heap


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        pytest.param([("a", 3), ("b", 1), ("c", 2)], ["b", "c", "a"], id="by-rank"),
        pytest.param(
            [("a", 1), ("b", 1), ("c", 1), ("d", 1)], ["a", "b", "c", "d"], id="equal-ranks-fifo"
        ),
        pytest.param(
            [("a", 2), ("b", 1), ("c", 2), ("d", 1)],
            ["b", "d", "a", "c"],
            id="mixed-fifo-within-rank",
        ),
        pytest.param([], [], id="empty"),
    ],
)
def test_pop_order(items: list[tuple[str, int]], expected: list[str]) -> None:
    assert _drain(_heap(*items)) == expected


def test_push_existing_key_replaces_and_reorders() -> None:
    heap = _heap(("a", 1), ("b", 2), ("c", 3))
    heap.push("c", Item("c", 0))
    assert len(heap) == 3
    assert _drain(heap) == ["c", "a", "b"]


def test_update_keeps_fifo_place_among_equals() -> None:
    heap = _heap(("a", 1), ("b", 1), ("c", 1))
    heap.push("a", Item("a", 1))  # same rank: must stay first
    assert _drain(heap) == ["a", "b", "c"]


def test_fix_after_in_place_change() -> None:
    heap = _heap(("a", 1), ("b", 2), ("c", 3))
    item = heap.get("a")
    assert item is not None
    item.rank = 10
    heap.fix("a")
    assert _drain(heap) == ["b", "c", "a"]


@pytest.mark.parametrize("victim", ["a", "b", "c", "d", "e"])
def test_remove_any_position(victim: str) -> None:
    heap = _heap(("a", 5), ("b", 1), ("c", 4), ("d", 2), ("e", 3))
    removed = heap.remove(victim)
    assert removed is not None
    assert removed.key == victim
    assert victim not in heap
    expected = [k for k in ["b", "d", "e", "c", "a"] if k != victim]
    assert _drain(heap) == expected


def test_remove_missing_and_pop_empty() -> None:
    heap = _heap()
    assert heap.remove("x") is None
    assert heap.peek() is None
    with pytest.raises(IndexError):
        heap.pop()


def test_random_operations_match_a_sorted_reference() -> None:
    rng = random.Random(7)
    heap: KeyedHeap[Item] = KeyedHeap(_by_rank)
    ref: dict[str, tuple[int, int]] = {}  # key -> (rank, first-push order)
    order = 0
    for _ in range(3000):
        op = rng.random()
        key = f"k{rng.randrange(200)}"
        if op < 0.5:
            rank = rng.randrange(20)
            if key not in ref:
                ref[key] = (rank, order)
                order += 1
            else:
                ref[key] = (rank, ref[key][1])
            heap.push(key, Item(key, rank))
        elif op < 0.75:
            assert (heap.remove(key) is not None) == (ref.pop(key, None) is not None)
        elif ref:
            expected = min(ref, key=lambda k: ref[k])
            assert heap.pop().key == expected
            del ref[expected]
        assert len(heap) == len(ref)
    assert _drain(heap) == sorted(ref, key=lambda k: ref[k])
