"""The columnar fast path and the per-node path must make the same decisions.

Hypothesis builds random clusters (allocatable, existing pods, unschedulable nodes,
taints of every effect, zone, rack and numeric labels or none, pods that fill nodes past
their pod slots, existing pods with host ports and required anti-affinity) and random pods
(requests or none, tolerations, a fixed nodeName, topology spread constraints over one or
two keys, a nodeSelector, required and preferred node affinity with every operator and
matchFields, required and preferred pod (anti-)affinity, host ports, images some nodes
hold), then runs the
default profile twice
over the same snapshot - `Framework(columnar=True)` and `columnar=False` - and compares
everything the scheduler acts on: the feasible nodes in order, how many were processed
(the next round-robin start), every rejected node's status (code, reasons, plugin), and
every Score plugin's raw, normalized and weighted scores and the totals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import anyio
import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from asched.api import Node, Pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.framework.columns import NodeRows
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.framework.types import NodeScore, NodeToStatus
from asched.plugins.interpodaffinity import scoring as ipa_scoring
from asched.plugins.noderesources import array_scorers, scorers
from asched.testing import make_node, make_pod
from asched.testing.profiles import default_profile
from tests.unit.framework.fakes import EmptyStores, FakeServices

TAINTS = [
    ("dedicated", "gpu", "NoSchedule"),
    ("dedicated", "gpu", "PreferNoSchedule"),
    ("maintenance", "", "NoExecute"),
    ("spot", "true", "PreferNoSchedule"),
]
TOLERATIONS = [
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "operator": "Exists"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]

ZONE, RACK = "topology.kubernetes.io/zone", "example.com/rack"
HOST, GEN = "kubernetes.io/hostname", "example.com/gen"
ZONES = ("zone-a", "zone-b", "zone-c")
# Values for the numeric label: what Go's ParseInt takes and refuses.
GENS = ("1", "2", "10", "+3", "007", "-1", "x", "")
IMAGES = ("nginx:1.27", "redis:7", "example.com/big:2")
PORTS = [(8080, "TCP", ""), (8080, "UDP", ""), (8080, "TCP", "10.0.0.1"), (9090, "TCP", "")]


@st.composite
def requirement(draw: st.DrawFn) -> dict[str, Any]:
    key = draw(st.sampled_from([ZONE, RACK, GEN]))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    values: list[str] = []
    if op in ("In", "NotIn"):
        pool = [*ZONES, "r0", "r1", *GENS[:3]]
        values = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
    elif op in ("Gt", "Lt"):
        values = [draw(st.sampled_from(["0", "1", "5", "+2", "x"]))]
    return {"key": key, "operator": op, "values": values}


@st.composite
def selector_term(draw: st.DrawFn, names: Sequence[str]) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": draw(st.lists(requirement(), max_size=2))}
    if draw(st.integers(0, 4)) == 0:
        picked = draw(st.lists(st.sampled_from(list(names)), min_size=1, max_size=3))
        op = draw(st.sampled_from(["In", "NotIn"]))
        term["matchFields"] = [{"key": "metadata.name", "operator": op, "values": picked}]
    return term


@st.composite
def node_affinity(draw: st.DrawFn, names: Sequence[str]) -> dict[str, Any]:
    na: dict[str, Any] = {}
    if draw(st.booleans()):
        terms = draw(st.lists(selector_term(names), min_size=1, max_size=2))
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    preferred = draw(st.lists(st.tuples(st.integers(1, 100), selector_term(names)), max_size=2))
    if preferred:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": t} for w, t in preferred
        ]
    return na


milli = st.integers(min_value=0, max_value=8000)
mebi = st.integers(min_value=0, max_value=16384)


@st.composite
def nodes_and_pods(draw: st.DrawFn) -> tuple[list[Node], list[Pod]]:
    n = draw(st.integers(min_value=1, max_value=12))
    nodes: list[Node] = []
    placed: list[Pod] = []
    for i in range(n):
        # Most nodes roomy and untainted, so that most pods have several feasible nodes
        # and reach Score; the rest full, small or tainted, so that Filter rejects some.
        roomy = draw(st.integers(0, 3)) > 0
        b = make_node(f"n{i}").capacity(
            cpu=f"{draw(st.integers(4000, 16000) if roomy else milli)}m",
            memory=f"{draw(st.integers(8192, 32768) if roomy else mebi)}Mi",
            pods=str(draw(st.integers(4, 8) if roomy else st.integers(0, 6))),
        )
        taints = draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True))
        for key, value, effect in taints if draw(st.integers(0, 2)) == 0 else ():
            b = b.taint(key, value, effect)
        if draw(st.booleans()) and draw(st.booleans()):
            b = b.unschedulable()
        zone = draw(st.sampled_from([*ZONES, None]))
        if zone is not None:
            b = b.label(ZONE, zone)
        if draw(st.booleans()):
            b = b.label(RACK, f"r{i % 3}")
        if draw(st.booleans()):
            b = b.label(GEN, draw(st.sampled_from(GENS)))
        if draw(st.integers(0, 2)) == 0:
            images = draw(st.lists(st.sampled_from(IMAGES), min_size=1, max_size=2, unique=True))
            b = b.image(images, draw(st.integers(1, 2000)) * 1024 * 1024)
        nodes.append(b.label(HOST, f"n{i}").obj())
        for j in range(draw(st.integers(0, 4))):
            p = make_pod(f"e{i}-{j}").node(f"n{i}")
            if draw(st.booleans()):
                p = p.label("app", draw(st.sampled_from(["web", "db"])))
            if draw(st.integers(0, 4)) == 0:
                port, proto, ip = draw(st.sampled_from(PORTS))
                p = p.host_port(port, proto, ip)
            if draw(st.integers(0, 4)) == 0:
                key = draw(st.sampled_from([HOST, ZONE]))
                p = p.pod_affinity(key, {"app": draw(st.sampled_from(["web", "db"]))}, anti=True)
            if draw(st.booleans()):
                p = p.cpu(f"{draw(st.integers(0, 3000))}m")
            if draw(st.booleans()):
                p = p.memory(f"{draw(st.integers(0, 8192))}Mi")
            placed.append(p.obj())
    return nodes, placed


# What an incoming pod may ask for; each pod draws at most two, so that every feature is
# often met alone, where a wrong batch answer is not hidden behind another plugin's.
FEATURES = (
    "tolerations",
    "node_name",
    "selector",
    "node_affinity",
    "ports",
    "pod_affinity",
    "image",
)


@st.composite
def incoming(draw: st.DrawFn, names: Sequence[str]) -> Pod:
    p = make_pod("incoming")
    if draw(st.booleans()):
        p = p.cpu(f"{draw(st.integers(0, 4000))}m")
    if draw(st.booleans()):
        p = p.memory(f"{draw(st.integers(0, 8192))}Mi")
    if draw(st.booleans()):
        p = p.label("app", "web")
    features = draw(st.sets(st.sampled_from(FEATURES), max_size=2))
    if "tolerations" in features:
        for t in draw(
            st.lists(st.sampled_from(TOLERATIONS), min_size=1, max_size=2, unique_by=str)
        ):
            p = p.toleration(**t)
    if "node_name" in features:
        p = p.node(draw(st.sampled_from(list(names))))
    if "selector" in features:
        p = p.node_selector({ZONE: draw(st.sampled_from(ZONES))})
    if "node_affinity" in features:
        na = draw(node_affinity(names))
        if na:
            p = p.affinity({"nodeAffinity": na})
    if "image" in features:
        p = p.image(draw(st.sampled_from(IMAGES)))
    if "ports" in features:
        for _ in range(draw(st.integers(1, 2))):
            port, proto, ip = draw(st.sampled_from(PORTS))
            p = p.host_port(port, proto, ip)
    if "pod_affinity" in features:
        for _ in range(draw(st.integers(1, 3))):
            p = p.pod_affinity(
                draw(st.sampled_from([HOST, ZONE, RACK])),
                {"app": draw(st.sampled_from(["web", "db"]))},
                anti=draw(st.booleans()),
                weight=draw(st.sampled_from([0, 1, 50])),
            )
    for key in draw(st.lists(st.sampled_from([ZONE, RACK]), max_size=2, unique=True)):
        p = p.spread(
            draw(st.integers(1, 2)),
            key,
            {"app": "web"},
            when=draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway", "ScheduleAnyway"])),
        )
    return p.obj()


Services = EmptyStores


def frameworks(services: FakeServices) -> tuple[Framework, Framework]:
    spec, registry = default_profile()
    return (
        Framework(spec, registry, services, columnar=True),
        Framework(spec, registry, services, columnar=False),
    )


async def decide(
    fwk: Framework, snapshot: Snapshot, pod: Pod, start: int, limit: int
) -> dict[str, Any]:
    state = CycleState()
    nodes = snapshot.node_infos()
    _, pre, _ = await fwk.run_pre_filter(state, pod, nodes)
    out: dict[str, Any] = {"prefilter": None if pre is None else (pre.code, pre.reasons)}
    if pre is not None and not pre.is_success():
        return out
    statuses = NodeToStatus()
    passed = await fwk.run_filter_over_nodes(
        state, pod, nodes, start=start, limit=limit, statuses=statuses
    )
    out["feasible"] = [ni.name for ni in passed.feasible]
    # Whether the columnar pass decided (the per-node pass returns a plain list).
    out["columnar"] = isinstance(passed.feasible, NodeRows)
    out["processed"] = passed.processed
    out["error"] = passed.error
    out["statuses"] = {
        n: (s.code, s.reasons, s.plugin) for n, s in sorted(statuses.statuses.items())
    }
    # The tally the cycle reads instead of walking every rejected node must count what
    # the map holds, on both paths.
    tally: Counter[tuple[object, ...]] = Counter()
    for held, count in statuses.tally_by_id().values():
        tally[(held.code, held.reasons, held.plugin)] += count
    assert +tally == Counter((s.code, s.reasons, s.plugin) for s in statuses.statuses.values())
    if len(passed.feasible) > 1:
        pst = await fwk.run_pre_score(state, pod, passed.feasible)
        # Compared by what a user sees: an Error status also holds the exception object,
        # which is a new one on each path.
        out["prescore"] = None if pst is None else (pst.code, pst.reasons, pst.plugin)
        if pst is None or pst.is_success():
            table, sst = await fwk.run_score_plugins(state, pod, passed.feasible)
            out["score_status"] = None if sst is None else (sst.code, sst.reasons, sst.plugin)
            out["scores"] = [(s.plugin, s.raw, s.normalized, s.weighted) for s in table.plugins]
            out["totals"] = table.totals
    return out


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_columnar_and_per_node_paths_decide_alike(data: st.DataObject) -> None:
    nodes, placed = data.draw(nodes_and_pods())
    pod = data.draw(incoming([n.name for n in nodes]))
    start = data.draw(st.integers(0, len(nodes) - 1))
    limit = data.draw(st.one_of(st.just(len(nodes)), st.integers(1, len(nodes))))
    cache, snapshot = Cache(), Snapshot()
    for node in nodes:
        cache.add_node(node)
    for p in placed:
        cache.add_pod(p)
    cache.update_snapshot(snapshot)
    assert isinstance(snapshot.node_infos(), NodeRows)
    services = Services(snapshot)
    fast, slow = frameworks(services)

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return (
            await decide(fast, snapshot, pod, start, limit),
            await decide(slow, snapshot, pod, start, limit),
        )

    with capture_logs() as logs:
        got, want = anyio.run(both)
    # Every default Filter plugin the generated pods reach has a batch form, so the fast
    # framework must never have fallen back to the per-node pass.
    if "columnar" in got:
        assert got.pop("columnar") is True
        assert want.pop("columnar") is False
    assert got == want
    # The fast path must have decided on its own: a batch plugin that crashed (or
    # disagreed with its own per-node status) falls back to the per-node path, which
    # would hide the bug from the comparison above.
    assert [e for e in logs if e.get("log_level") in ("error", "critical")] == []


def test_the_columns_follow_assume_and_forget() -> None:
    """A pod assumed or forgotten moves its node's row at the next snapshot refresh."""
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node("a").capacity(cpu="2", memory="1Gi", pods="3").obj())
    cache.add_node(make_node("b").capacity(cpu="4", memory="1Gi", pods="3").obj())
    cache.update_snapshot(snapshot)
    cols = snapshot.columns
    row = cols.names.index("b")
    pod = make_pod("p").cpu("1500m").memory("100Mi").node("b").obj()
    cache.assume_pod(pod)
    cache.update_snapshot(snapshot)
    assert (cols.req_cpu[row], cols.req_mem[row], cols.pod_count[row]) == (1500, 100 << 20, 1)
    cache.forget_pod(pod)
    cache.update_snapshot(snapshot)
    assert (cols.req_cpu[row], cols.req_mem[row], cols.pod_count[row]) == (0, 0, 0)
    assert snapshot.columns is cols  # updated in place, not rebuilt


def test_the_columns_know_when_every_node_has_cpu_and_memory() -> None:
    """cpu_memory_everywhere, which picks the array scorers' short forms, follows node
    updates, node additions and removals."""
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node("a").capacity(cpu="2", memory="1Gi", pods="3").obj())
    cache.add_node(make_node("b").capacity(cpu="4", memory="0", pods="3").obj())
    cache.update_snapshot(snapshot)
    cols = snapshot.columns
    assert not cols.cpu_memory_everywhere
    cache.update_node(make_node("b").capacity(cpu="4", memory="1Gi", pods="3").obj())
    cache.update_snapshot(snapshot)
    assert snapshot.columns is cols
    assert cols.cpu_memory_everywhere
    cache.update_node(make_node("a").capacity(cpu="0", memory="1Gi", pods="3").obj())
    cache.update_snapshot(snapshot)
    assert not cols.cpu_memory_everywhere
    cache.add_node(make_node("c").capacity(cpu="1", memory="1Gi", pods="3").obj())
    cache.update_snapshot(snapshot)  # a new node: the rows are rebuilt and counted again
    assert not snapshot.columns.cpu_memory_everywhere
    cache.remove_node("a")
    cache.update_snapshot(snapshot)
    assert snapshot.columns.cpu_memory_everywhere


ints = st.integers(min_value=0, max_value=1 << 40)
weights = st.integers(min_value=0, max_value=10)


positive = st.integers(min_value=1, max_value=1 << 40)


@settings(max_examples=500, deadline=None)
@given(
    rows=st.lists(st.tuples(ints, ints, ints, ints), min_size=1, max_size=20),
    w0=weights,
    w1=weights,
    p0=st.integers(0, 1 << 20),
    p1=st.integers(0, 1 << 20),
)
def test_array_scorers_equal_the_scalar_ones(
    rows: list[tuple[int, int, int, int]], w0: int, w1: int, p0: int, p1: int
) -> None:
    _assert_array_scorers_agree(rows, w0, w1, p0, p1)


@settings(max_examples=500, deadline=None)
@given(
    rows=st.lists(st.tuples(ints, positive, ints, positive), min_size=1, max_size=20),
    w0=weights,
    w1=weights,
    p0=st.integers(0, 1 << 20),
    p1=st.integers(0, 1 << 20),
)
def test_array_scorers_fast_forms_equal_the_scalar_ones(
    rows: list[tuple[int, int, int, int]], w0: int, w1: int, p0: int, p1: int
) -> None:
    """Every allocatable non-zero: the array scorers take their shorter forms, found
    from the arrays or told by the caller (NodeColumns.cpu_memory_everywhere)."""
    _assert_array_scorers_agree(rows, w0, w1, p0, p1)
    _assert_array_scorers_agree(rows, w0, w1, p0, p1, positive=True)


def _assert_array_scorers_agree(
    rows: list[tuple[int, int, int, int]],
    w0: int,
    w1: int,
    p0: int,
    p1: int,
    *,
    positive: bool | None = None,
) -> None:
    r0, a0, r1, a1 = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    least, most = scorers.LeastAllocated((w0, w1)), scorers.MostAllocated((w0, w1))
    got_least = array_scorers.least_allocated_pair(r0, a0, r1, a1, w0=w0, w1=w1, positive=positive)
    assert got_least.tolist() == [least.pair(*row) for row in rows]
    got_most = array_scorers.most_allocated_pair(r0, a0, r1, a1, w0=w0, w1=w1, positive=positive)
    assert got_most.tolist() == [most.pair(*row) for row in rows]
    # BalancedAllocation passes requested = used + the pod's request.
    r0p, r1p = r0 + p0, r1 + p1
    want = [
        scorers.balanced_improvement_pair(x + p0, a, y + p1, b, p0=p0, p1=p1) for x, a, y, b in rows
    ]
    got = array_scorers.balanced_improvement_pair(r0p, a0, r1p, a1, p0=p0, p1=p1, positive=positive)
    assert got.tolist() == want


@settings(max_examples=300, deadline=None)
@example(raw=[0, 100, 29], span=1, at=0)
@given(
    raw=st.lists(st.integers(-500, 500), min_size=1, max_size=30),
    span=st.integers(1, 1000),
    at=st.integers(0, 1000),
)
def test_inter_pod_affinity_normalize_array_equals_the_per_node_one(
    raw: list[int], span: int, at: int
) -> None:
    """The float arithmetic of scoring.go's NormalizeScore, truncated as Go does: an
    integer-division rewrite differs where 100 * (x / d) lands just below an integer."""
    # Besides random lists, one spanning [0, span] with a point inside; the explicit
    # example is one where float rounding shows (100 * (29 / 100) = 28.999999999999996).
    if at % 2:
        raw = [0, span, at % (span + 1)]
    s = ipa_scoring.PreScoreState({"k": {"v": 1}})
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    ipa_scoring.normalize(s, scores)
    got = ipa_scoring.normalize_array(s, np.array(raw, dtype=np.int64))
    assert got.tolist() == [x.score for x in scores]


def test_inter_pod_affinity_batch_keeps_the_per_node_status_order() -> None:
    """A node that fails both the pod's own anti-affinity and an existing pod's gets the
    first check's status, as filter_node returns it."""
    cache, snapshot = Cache(), Snapshot()
    for name in ("a", "b"):
        cache.add_node(make_node(name).label(HOST, name).obj())
    cache.add_pod(
        make_pod("e")
        .label("app", "db")
        .node("a")
        .pod_affinity(HOST, {"app": "web"}, anti=True)
        .obj()
    )
    cache.update_snapshot(snapshot)
    pod = make_pod("p").label("app", "web").pod_affinity(HOST, {"app": "db"}, anti=True).obj()
    fast, slow = frameworks(Services(snapshot))

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return (
            await decide(fast, snapshot, pod, 0, 2),
            await decide(slow, snapshot, pod, 0, 2),
        )

    got, want = anyio.run(both)
    assert got["columnar"] is True
    assert got["statuses"] == want["statuses"]
    assert got["statuses"]["a"][1] == ("node(s) didn't match pod anti-affinity rules",)
    assert got["feasible"] == want["feasible"] == ["b"]


shape_points = st.lists(
    st.tuples(st.integers(0, 100), st.integers(0, 100)),
    min_size=1,
    max_size=4,
    unique_by=lambda x: x[0],
)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(ints, ints, ints, ints), min_size=1, max_size=20),
    w0=weights,
    w1=weights,
    shape=shape_points,
)
def test_requested_to_capacity_ratio_array_equals_the_scalar_one(
    rows: list[tuple[int, int, int, int]], w0: int, w1: int, shape: list[tuple[int, int]]
) -> None:
    """The tabulated broken-linear function and weighted mean, node for node."""
    shape = sorted(shape)
    scalar = scorers.RequestedToCapacityRatio((w0, w1), shape)
    pair = array_scorers.requested_to_capacity_pair(scalar.raw)
    r0, a0, r1, a1 = (np.array(col, dtype=np.int64) for col in zip(*rows, strict=True))
    got = pair(r0, a0, r1, a1, w0=w0, w1=w1)
    assert got.tolist() == [scalar.pair(*row) for row in rows]
