"""One node's allocation outcome, kept for the next pod whose claims ask the same.

What the structured allocator decides for a node is a function of the node's pools, the
claims' requests and constraints, the device classes, and which of the node's devices
are allocated. Go's Filter runs the search again for every pod (allocateOne per node);
pods made from one ResourceClaimTemplate ask the same on every node, and between two of
them at most the node that took the last pod changed. So for a node whose pools are
plain (no shared devices, counters, per-device node selection, or pools being updated or
invalid), the outcome (the allocations, or "does not fit") is kept with those inputs and
given to the next pod when they are the same objects and the node's allocated devices
are the same. A search that raised (an error, a timeout) is not kept: it runs again.

The memo lives in the SliceIndex, so a slice event drops it with the pools.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from asched.api.dra import Allocation, DeviceClass

# How many distinct claim shapes one node keeps outcomes for, and the whole memo numbers
# (a cluster whose claims all differ starts over rather than growing until a slice event).
_PER_NODE = 8
_SHAPES = 1024


@dataclass(frozen=True, slots=True)
class Inputs:
    """What an outcome was decided from, compared by identity (pools, classes) and by
    value (which of the node's devices were allocated)."""

    pools: object
    classes: tuple[DeviceClass | None, ...]
    allocated: tuple[bool, ...]

    def same(self, other: Inputs) -> bool:
        return (
            self.pools is other.pools
            and self.allocated == other.allocated
            and len(self.classes) == len(other.classes)
            and all(a is b for a, b in zip(self.classes, other.classes, strict=True))
        )


@dataclass(frozen=True, slots=True)
class _Outcome:
    inputs: Inputs
    allocations: tuple[Allocation, ...] | None


class NodeOutcomes:
    """Outcomes by node and claim shape for the nodes of one SliceIndex."""

    def __init__(self) -> None:
        # Claim shapes (the claims' requests and constraints) as small ints, so a
        # node's lookup hashes an int rather than the requests again.
        self._shapes: dict[Hashable, int] = {}
        self._next = 0
        self._outcomes: dict[str, dict[int, _Outcome]] = {}

    def shape(self, shape: Hashable) -> int | None:
        """The number of a claim shape, None when it cannot be compared (a request with
        capacity amounts holds a dict): such claims are always searched."""
        try:
            number = self._shapes.get(shape)
        except TypeError:
            return None
        if number is None:
            if len(self._shapes) >= _SHAPES:
                self._shapes.clear()
                self._outcomes.clear()
            # Never reused: an allocator may still hold a number from before a clear.
            number = self._shapes[shape] = self._next
            self._next += 1
        return number

    def get(
        self, node: str, shape: int, inputs: Inputs
    ) -> tuple[bool, Sequence[Allocation] | None]:
        """(True, the kept outcome) when one was decided from the same inputs."""
        kept = self._outcomes.get(node, {}).get(shape)
        if kept is None or not kept.inputs.same(inputs):
            return False, None
        return True, kept.allocations

    def put(
        self, node: str, shape: int, inputs: Inputs, allocations: Sequence[Allocation] | None
    ) -> None:
        outcomes = self._outcomes.setdefault(node, {})
        if shape not in outcomes and len(outcomes) >= _PER_NODE:
            outcomes.clear()
        outcomes[shape] = _Outcome(inputs, None if allocations is None else tuple(allocations))
