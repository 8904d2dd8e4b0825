"""Per-node folds over the node's pods that a recompute extends instead of redoing.

InterPodAffinity's memos (counting.py, readkeys.py) recompute a node whenever one of its
pods changes, and what a node contributes is a fold of what each of its pods contributes.
On a node holding a hundred pods with terms, matching every pod's terms again on each
bind was most of PreScore's cost (scheduler_perf's preferred-affinity workloads pile the
pods onto a few nodes). A `PodFold` keeps, per node, the pods it last saw, each pod's
value and their fold:
- when the node's pods are the ones seen before with more appended (a pod bound or
  assumed there: NodeInfo.add_pod appends), only the new pods are computed and folded in;
- otherwise (a pod removed or replaced) the fold is rebuilt, with the values of pods
  that are the same objects as before reused.

Pod objects are replaced, never mutated, so identity tells a pod unchanged. A value may
depend on the pod, on the `scope` given with it (identity-compared: the node's labels,
say) and on what the owner keeps constant for this fold (a memo key), never on the
node's other pods.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from asched.api import Pod

V = TypeVar("V")
A = TypeVar("A")
S = TypeVar("S")


class PodFold(Generic[V, A]):
    """`fold(...)` per node name; the accumulator returned belongs to the fold: read it
    before the node's next `fold`, never keep it."""

    __slots__ = ("_add", "_nodes", "_start")

    def __init__(self, start: Callable[[], A], add: Callable[[A, V], None]) -> None:
        self._start, self._add = start, add
        # node name -> (scope, the pods folded, their values, the fold); a tuple, not an
        # object: a fold runs for every node a memo revisits.
        self._nodes: dict[str, tuple[object, tuple[Pod, ...], list[V], A]] = {}

    def fold(
        self,
        node: str,
        scope: S,
        pods: Sequence[Pod],
        value_of: Callable[[Pod, S], V],
    ) -> A:
        """The fold of `value_of(p, scope)` over `pods`, computing only pods not seen
        before under this scope."""
        add = self._add
        last = self._nodes.get(node)
        if last is not None and last[0] is scope:
            _, seen, values, acc = last
            if len(pods) >= len(seen) and all(map(operator.is_, seen, pods)):
                # All computed before any is folded in: a failing value_of leaves the fold
                # whole.
                new = [value_of(p, scope) for p in pods[len(seen) :]]
                for v in new:
                    values.append(v)
                    add(acc, v)
                self._nodes[node] = (scope, tuple(pods), values, acc)
                return acc
            before = {p.uid: (p, v) for p, v in zip(seen, values, strict=True)}
        else:
            before = {}
        values, acc = [], self._start()
        for p in pods:
            held = before.get(p.uid)
            v = held[1] if held is not None and held[0] is p else value_of(p, scope)
            values.append(v)
            add(acc, v)
        self._nodes[node] = (scope, tuple(pods), values, acc)
        return acc

    def forget(self, node: str) -> None:
        self._nodes.pop(node, None)
