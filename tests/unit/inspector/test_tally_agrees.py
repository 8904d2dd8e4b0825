"""FitError.message and the collector's Rejection count per distinct Status (the map's
tally) instead of walking every rejected node: they must say exactly what the walk said,
however the map was written (set, a Filter pass's rejections, deferred chunks, absent)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asched.framework.status import Code, Status
from asched.framework.types import NodeToStatus, PluginScores, QueuedPodInfo
from asched.inspector.collector import Collector
from asched.scheduler.diagnosis import Diagnosis, FitError
from tests.builders import make_pod

NODES = [f"n{i}" for i in range(8)]
REASONS = ["Insufficient cpu", "Insufficient memory", "node(s) had untolerated taint", "x"]
PLUGINS = ["", "NodeResourcesFit", "TaintToleration"]

statuses = st.builds(
    lambda code, reasons, plugin: Status(code, tuple(reasons), plugin=plugin),
    st.sampled_from([Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE]),
    st.lists(st.sampled_from(REASONS), min_size=1, max_size=3),
    st.sampled_from(PLUGINS),
)


@dataclass(frozen=True)
class Write:
    how: str  # "set", "add" or "defer"
    nodes: tuple[str, ...]
    picks: tuple[int, ...]  # per node, which of the pool's statuses it gets


writes = st.builds(
    Write,
    st.sampled_from(["set", "add", "defer"]),
    st.lists(st.sampled_from(NODES), min_size=1, max_size=6, unique=True).map(tuple),
    st.lists(st.integers(0, 3), min_size=6, max_size=6).map(tuple),
)


def _written(pool: list[Status], ops: list[Write], absent: Status | None) -> NodeToStatus:
    nts = NodeToStatus(absent=absent)
    for op in ops:
        got = {n: pool[op.picks[i]] for i, n in enumerate(op.nodes)}
        counts = [(s, sum(1 for x in got.values() if x is s)) for s in pool]
        if op.how == "set":
            for n, s in got.items():
                nts.set(n, s)
        elif op.how == "add":
            nts.add_rejections(got, counts)
        else:
            codes = [op.picks[i] + 1 for i in range(len(op.nodes))]
            nts.defer_rejections([(op.nodes, codes, tuple(pool))], counts)
    return nts


def _walked_message(fit: FitError) -> str:
    """FitError.message as it was: every node's reasons, one node at a time."""
    d = fit.diagnosis
    counts: dict[str, int] = {}
    for s in d.node_to_status.statuses.values():
        for reason in s.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = fit.num_all_nodes - len(d.node_to_status)
    if absent > 0 and d.node_to_status.absent is not None:
        for reason in d.node_to_status.absent.reasons:
            counts[reason] = counts.get(reason, 0) + absent
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    msg = f"0/{fit.num_all_nodes} nodes are available:"
    if parts:
        msg += f" {', '.join(parts)}."
    return msg + (f" {d.post_filter_msg}" if d.post_filter_msg else "")


def _walked_plugins(fit: FitError) -> dict[str, int]:
    nts = fit.diagnosis.node_to_status
    plugins: dict[str, int] = {}
    for s in nts.statuses.values():
        plugins[s.plugin or "(none)"] = plugins.get(s.plugin or "(none)", 0) + 1
    absent = fit.num_all_nodes - len(nts)
    if absent > 0 and nts.absent is not None:
        name = nts.absent.plugin or " ".join(sorted(fit.diagnosis.unschedulable_plugins))
        plugins[name or "(none)"] = plugins.get(name or "(none)", 0) + absent
    return plugins


@settings(max_examples=300, deadline=None)
@given(
    pool=st.lists(statuses, min_size=4, max_size=4),
    ops=st.lists(writes, max_size=5),
    absent=st.none() | statuses,
    extra_nodes=st.integers(0, 4),
    post_filter_msg=st.sampled_from(["", "preemption: 0/8 nodes are available."]),
)
def test_counting_by_the_tally_says_what_walking_the_nodes_said(
    pool: list[Status],
    ops: list[Write],
    absent: Status | None,
    extra_nodes: int,
    post_filter_msg: str,
) -> None:
    nts = _written(pool, ops, absent)
    diagnosis = Diagnosis(node_to_status=nts, unschedulable_plugins={"NodeResourcesFit"})
    diagnosis.post_filter_msg = post_filter_msg
    fit = FitError("default/p", len(nts) + extra_nodes, diagnosis)
    collector = Collector(max_rejections=10, wall=lambda: 5.0)
    collector.unschedulable(QueuedPodInfo(make_pod("p").obj(), 0.0), "default-scheduler", fit)
    # Counted first (from the tally, the deferred map still unbuilt), then walked.
    message = fit.message()
    collector.drain()
    rejection = collector.rejections["default/p"]
    assert message == _walked_message(fit)
    assert rejection.message == message
    assert rejection.plugins == _walked_plugins(fit)
    assert rejection.nodes == fit.num_all_nodes


@settings(max_examples=100, deadline=None)
@given(
    scores=st.lists(st.integers(-(2**40), 2**40), min_size=3, max_size=30),
    picks=st.lists(st.integers(0, 2), min_size=1, max_size=4),
    as_arrays=st.booleans(),
)
def test_plugin_rows_read_what_at_reads(
    scores: list[int], picks: list[int], as_arrays: bool
) -> None:
    n = len(scores) // 3
    raw, normalized, weighted = scores[:n], scores[n : 2 * n], scores[2 * n : 3 * n]
    stages = [np.asarray(s, dtype=np.int64) for s in (raw, normalized, weighted)]
    ps = PluginScores("P", 2, *(stages if as_arrays else (raw, normalized, weighted)))
    listed = [p % n for p in picks]
    rows = ps.rows(np.asarray(listed, dtype=np.intp))
    assert rows == [ps.at(i) for i in listed]
    assert all(type(v) is int for row in rows for v in row)
