"""Mixed profiles: batch, memoized and per-node Filter and Score plugins in any order.

The columnar pass runs batch plugins over the columns and per-node plugins only where a
batch plugin leaves the answer open, and it keeps nodes that hold nominated pods on
kube-scheduler's two passes. It must decide exactly what the all-per-node pass decides:
the feasible nodes in order, `processed`, every rejected node's status (the first
rejecting plugin in profile order, code, reasons) and every score. Hypothesis builds the
clusters of test_columns_agree, puts out-of-tree-style plugins (per-node, node-static,
pod-dependent, erroring, async) anywhere in the default profile's Filter and Score order,
nominates some pods, and then updates a node between two pods so the memos must follow.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from asched.api import Node, Pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import PodKey
from asched.framework.nodeinfo import NodeInfo
from asched.framework.points import ExtensionPoint as EP
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Code, Status
from asched.testing import make_node, make_pod
from asched.testing.profiles import default_profile
from tests.unit.framework.test_columns_agree import (
    ZONE,
    ZONES,
    Services,
    decide,
    incoming,
    nodes_and_pods,
)

DISK = "example.com/disk"
APP = "app"


class Fence:
    """A per-node Filter on a node label: the shape of most custom filters."""

    def __init__(self, name: str, allowed: frozenset[str], code: Code, error_on: str) -> None:
        self._name = name
        self._allowed = allowed
        self._reject = Status(code, (f"node(s) outside {name}'s zones",), name)
        self._error_on = error_on

    @property
    def name(self) -> str:
        return self._name

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name == self._error_on:
            return Status(Code.ERROR, ("no answer for this node",), self._name)
        node = node_info.node
        assert node is not None
        return None if node.labels.get(ZONE) in self._allowed else self._reject


class StaticFence(Fence):
    """The same, node-static: a pod labelled app=db is also fenced off disk=hdd nodes."""

    def pod_key(self, pod: Pod) -> PodKey:
        return pod.labels.get(APP, "")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        st = super().filter(state, pod, node_info)
        node = node_info.node
        assert node is not None
        if st is None and pod.labels.get(APP) == "db" and node.labels.get(DISK) == "hdd":
            return Status(Code.UNSCHEDULABLE, ("hdd node",), self._name)
        return st


class AsyncFence(Fence):
    async def filter(  # type: ignore[override]
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        return Fence.filter(self, state, pod, node_info)


class Crowded:
    """A per-node Filter on the node's pods: not node-static."""

    def __init__(self, name: str, most: int) -> None:
        self._name = name
        self._most = most
        self._reject = Status(Code.UNSCHEDULABLE, ("too many pods",), name)

    @property
    def name(self) -> str:
        return self._name

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._reject if len(node_info.pods) > self._most else None


class Strength:
    """A per-node Score from allocatable cpu, in [0, 100]."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return node_info.allocatable.milli_cpu // 160 % 101


class StaticStrength(Strength):
    def pod_key(self, pod: Pod) -> PodKey:
        return (pod.labels.get(APP, ""),)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        bonus = 10 if pod.labels.get(APP) == "web" else 0
        return min(100, super().score(state, pod, node_info) + bonus)


def spec_of(plugin: object) -> PluginSpec:
    return PluginSpec(plugin.name, object, factory=lambda _args, _handle: plugin)  # type: ignore[attr-defined]


@st.composite
def extra_plugins(draw: st.DrawFn, names: list[str]) -> tuple[list[object], list[object]]:
    filters: list[object] = []
    for i in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["fence", "static", "async", "crowded"]))
        name = f"Custom{kind.title()}{i}"
        if kind == "crowded":
            filters.append(Crowded(name, draw(st.integers(0, 3))))
            continue
        allowed = frozenset(draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=3)))
        code = draw(st.sampled_from([Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE]))
        error_on = draw(st.sampled_from(["", "", "", *names]))
        cls = {"fence": Fence, "static": StaticFence, "async": AsyncFence}[kind]
        filters.append(cls(name, allowed, code, error_on))
    scores: list[object] = []
    for i in range(draw(st.integers(0, 2))):
        cls = draw(st.sampled_from([Strength, StaticStrength]))
        scores.append(cls(f"{cls.__name__}{i}"))
    return filters, scores


def profile_with(
    draw: st.DrawFn, filters: list[object], scores: list[object]
) -> tuple[ProfileSpec, Any]:
    spec, registry = default_profile()
    plugins = {point: list(refs) for point, refs in spec.plugins.items()}
    for p in filters:
        registry.register(spec_of(p))
        at = draw(st.integers(0, len(plugins[EP.FILTER])))
        plugins[EP.FILTER].insert(at, (p.name, 0))  # type: ignore[attr-defined]
    for p in scores:
        registry.register(spec_of(p))
        at = draw(st.integers(0, len(plugins[EP.SCORE])))
        plugins[EP.SCORE].insert(at, (p.name, draw(st.integers(1, 3))))  # type: ignore[attr-defined]
    return ProfileSpec(spec.scheduler_name, plugins, spec.plugin_args), registry


def relabelled(node: Node, zone: str | None) -> Node:
    """A new version of `node` (a new Node object, as an informer update makes) with its
    zone label changed."""
    labels = {k: v for k, v in node.labels.items() if k != ZONE}
    if zone is not None:
        labels[ZONE] = zone
    return replace(node, labels=labels, resource_version=node.resource_version + "1")


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_mixed_profiles_decide_as_the_per_node_path(data: st.DataObject) -> None:
    nodes, placed = data.draw(nodes_and_pods())
    names = [n.name for n in nodes]
    disk = {n.name: data.draw(st.sampled_from(["ssd", "hdd", None])) for n in nodes}
    filters, scores = data.draw(extra_plugins(names))
    spec, registry = profile_with(data.draw, filters, scores)
    # Mostly the same app twice: the second pod then reads the first one's memo.
    apps = data.draw(st.sampled_from(["web", "db", None]))
    pods = [
        _with_app(data.draw(incoming(names)), apps),
        _with_app(data.draw(incoming(names)), data.draw(st.sampled_from([apps, apps, "web"]))),
    ]
    cache, snapshot = Cache(), Snapshot()
    for node in nodes:
        cache.add_node(_with_disk(node, disk[node.name]))
    for p in placed:
        cache.add_pod(p)
    cache.update_snapshot(snapshot)
    services = Services(snapshot)
    # Some existing pods, moved back to pending, nominated to a node (preemption's mark).
    for p in placed:
        if data.draw(st.integers(0, 5)) == 0:
            services.nominated.setdefault(data.draw(st.sampled_from(names)), []).append(
                make_pod(f"nom-{p.name}").cpu("500m").priority(data.draw(st.integers(0, 1))).obj()
            )
    fast = Framework(spec, registry, services, columnar=True)
    slow = Framework(spec, registry, services, columnar=False)
    start = data.draw(st.integers(0, len(nodes) - 1))
    limit = data.draw(st.one_of(st.just(len(nodes)), st.integers(1, len(nodes))))
    moved = data.draw(st.sampled_from(names))
    old_zone = next(n for n in nodes if n.name == moved).labels.get(ZONE)
    new_zone = data.draw(st.sampled_from([z for z in (*ZONES, None) if z != old_zone]))

    async def run() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        out = []
        for i, pod in enumerate(pods):
            if i == 1:
                # A node update between two pods: memos must recompute that row.
                old = next(n for n in nodes if n.name == moved)
                cache.update_node(_with_disk(relabelled(old, new_zone), disk[moved]))
                cache.update_snapshot(snapshot)
            got = await decide(fast, snapshot, pod, start, limit)
            want = await decide(slow, snapshot, pod, start, limit)
            out.append((got, want))
        return out

    with capture_logs() as logs:
        results = anyio.run(run)
    for got, want in results:
        if "columnar" in got:
            assert got.pop("columnar") is True
            assert want.pop("columnar") is False
        if got.get("error") is not None or want.get("error") is not None:
            # Compared by what a user sees: the Error holds no exception object here.
            assert got.pop("error") == want.pop("error")
        assert got == want
    assert [e for e in logs if e.get("log_level") in ("error", "critical")] == []


def _with_app(pod: Pod, app: str | None) -> Pod:
    if app is None:
        return pod
    return replace(pod, labels={**pod.labels, APP: app})


def _with_disk(node: Node, disk: str | None) -> Node:
    if disk is None:
        return node
    node.labels[DISK] = disk
    return node


def test_a_nominated_node_alone_takes_the_two_passes() -> None:
    """One nominated pod keeps only its node on the per-node path: the pass stays columnar
    (its feasible nodes come back as rows), and the nominated pod's request counts there."""
    nodes = [make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods="10").obj() for i in range(4)]
    cache, snapshot = Cache(), Snapshot()
    for n in nodes:
        cache.add_node(n)
    cache.update_snapshot(snapshot)
    services = Services(snapshot)
    services.nominated["n2"] = [make_pod("big").cpu("1500m").priority(10).obj()]
    spec, registry = default_profile()
    fwk = Framework(spec, registry, services, columnar=True)
    pod = make_pod("p").cpu("1").obj()

    async def run() -> dict[str, Any]:
        return await decide(fwk, snapshot, pod, 0, 4)

    got = anyio.run(run)
    assert got["columnar"] is True
    assert got["feasible"] == ["n0", "n1", "n3"]
    assert got["statuses"]["n2"] == (Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")
