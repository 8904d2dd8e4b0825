"""The snapshot's columns stay what a fresh build of its node list gives, whatever mix of
cache refreshes (node updates, pod events) and group-cycle simulations (assume_pod,
forget_pod) wrote them: set_row's pods-only path must leave no column stale."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api import Node, Pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.framework.columns import NodeColumns
from tests.builders import make_node, make_pod

NODES = 4
_COLUMNS = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "nz_cpu",
    "nz_mem",
    "pod_count",
    "generation",
    "unschedulable",
    "hard_taints",
    "prefer_taints",
    "has_ports",
    "with_affinity",
)


@dataclass(frozen=True)
class Op:
    kind: str  # "node" (update), "pod" (bind), "unbind", "assume", "forget"
    node: int
    value: int


def _node(i: int, value: int) -> Node:
    b = make_node(f"n{i}").capacity(cpu=str(2 + value % 3), memory="8Gi", pods="110")
    b = b.label("zone", f"z{value % 2}")
    if value % 4 == 1:
        b = b.taint("dedicated", "x")
    return b.obj()


def _pod(name: str, node: int, value: int) -> Pod:
    b = make_pod(name).uid(name).node(f"n{node}").cpu(f"{100 * (1 + value % 5)}m")
    if value % 3 == 0:
        b = b.host_port(8000 + value)
    return b.obj()


ops_st = st.lists(
    st.builds(
        Op,
        st.sampled_from(["node", "pod", "unbind", "assume", "forget"]),
        st.integers(0, NODES - 1),
        st.integers(0, 11),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(ops=ops_st)
def test_columns_match_a_fresh_build(ops: list[Op]) -> None:
    cache, snapshot = Cache(), Snapshot()
    for i in range(NODES):
        cache.add_node(_node(i, 0))
    cache.update_snapshot(snapshot)
    bound: list[Pod] = []
    assumed: list[Pod] = []
    for n, op in enumerate(ops):
        if op.kind == "node":
            cache.update_node(_node(op.node, op.value))
        elif op.kind == "pod":
            pod = _pod(f"p{n}", op.node, op.value)
            cache.add_pod(pod)
            bound.append(pod)
        elif op.kind == "unbind" and bound:
            cache.remove_pod(bound.pop(op.value % len(bound)))
        elif op.kind == "assume":
            pod = _pod(f"s{n}", op.node, op.value)
            snapshot.assume_pod(pod)
            assumed.append(pod)
            _check(snapshot)
            continue  # a simulation writes the snapshot only; no refresh in between
        elif op.kind == "forget" and assumed:
            snapshot.forget_pod(assumed.pop(op.value % len(assumed)))
            _check(snapshot)
            continue
        assumed.clear()  # the refresh forgets whatever a simulation left
        cache.update_snapshot(snapshot)
        _check(snapshot)
    _check(snapshot)


def _check(snapshot: Snapshot) -> None:
    cols = snapshot.columns
    zone = cols.label("zone")
    fresh = NodeColumns(list(snapshot.node_infos()))
    for name in _COLUMNS:
        assert np.array_equal(getattr(cols, name), getattr(fresh, name)), name
    assert cols.names == fresh.names
    assert cols.cpu_memory_everywhere == fresh.cpu_memory_everywhere
    got = [zone.values[c] if c >= 0 else None for c in zone.codes.tolist()]
    want_col = fresh.label("zone")
    want = [want_col.values[c] if c >= 0 else None for c in want_col.codes.tolist()]
    assert got == want
