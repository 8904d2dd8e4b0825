"""Run a plugin, or a small profile of plugins, through the real framework runtime.

A plugin's methods can be unit-tested one by one with a FakeHandle, but what a user sees
is the runtime's answer: PreFilter's Skip removing Filter, the first rejection winning,
NormalizeScore and the weights, the node with the best total. `Runner` builds a real
`Framework` (asched.framework.runtime) for a profile of the given plugins, over a
snapshot that a real `Cache` makes from the given nodes and pods, and runs one
scheduling cycle per call. Plugins are passed as PluginSpecs (or classes, or factories)
directly, so no entry point needs to be installed.

How a cycle here differs from the scheduler's, so that the answer is complete and
deterministic: every node is filtered (no percentageOfNodesToScore sampling, no round
robin, no nominated-node shortcut); scoring runs even when one node fits; ties are
reported, not broken at random. The steps are the scheduler's own (asched.scheduler's
Algorithm.evaluate in its full mode). Reserve, Permit and Unreserve run on request; PostFilter
and the binding points never run.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from asched.api import Node, Pod
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.base.clock import FakeClock
from asched.framework.cycle_state import CycleState
from asched.framework.handle import Handle
from asched.framework.interfaces import Plugin
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.points import ExtensionPoint
from asched.framework.registry import PluginSpec, Registry
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Status
from asched.informers import Store
from asched.plugins.queuesort import SPEC as PRIORITY_SORT_SPEC
from asched.plugins.registry import in_tree_registry
from asched.scheduler.algorithm import Algorithm
from asched.testing.fakes import FakeClient, FakeEvents, filled_store
from asched.testing.results import FEASIBLE, CycleResult, ScoresByNode

Factory = Callable[[Any, Handle], Plugin]


@dataclass(frozen=True, slots=True)
class Enabled:
    """A plugin enabled in the runner's profile (see `enable`)."""

    spec: PluginSpec
    args: Any = None
    weight: int = 1
    points: frozenset[str] | None = None

    def enabled_points(self) -> frozenset[str]:
        return self.points if self.points is not None else self.spec.extension_points()

    def parsed_args(self) -> Any:
        """Raw args (a mapping, or None) go through the spec's validation, as the config
        loader does; an already-built args object is passed as it is."""
        if self.args is None or isinstance(self.args, Mapping):
            return self.spec.parse_args(self.args, "args")
        return self.args


def enable(
    plugin: PluginSpec | str | type | Factory,
    *,
    args: Any = None,
    weight: int = 1,
    points: Collection[str] | None = None,
    name: str = "",
) -> Enabled:
    """Enable `plugin` with `args` (raw config mapping or args object) and a Score weight.

    `plugin` is a PluginSpec, an in-tree plugin's name, a plugin class built as
    `cls(args, handle)`, or any factory `(args, handle) -> plugin`. Without `points` the
    plugin is enabled at every extension point its class implements, as the config's
    multiPoint does; a bare factory names no class, so it needs `points` (and, like a
    class, a `name`).
    """
    if isinstance(plugin, str):
        spec = in_tree_registry().get(plugin)
    elif isinstance(plugin, PluginSpec):
        spec = plugin
    elif not name:
        raise ValueError("enable(): a plugin class or factory needs name=")
    elif isinstance(plugin, type):
        spec = PluginSpec(name, plugin)
    elif points is None:
        raise ValueError(f"enable({name}): a factory needs points= (e.g. ['filter'])")
    else:
        spec = PluginSpec(name, object, factory=plugin)
    unknown = set(points or ()) - {p.value for p in ExtensionPoint}
    if unknown:
        raise ValueError(f"enable({spec.name}): unknown extension points {sorted(unknown)}")
    return Enabled(spec, args, weight, None if points is None else frozenset(points))


class _Services:
    """SchedulerServices for the runner's cluster: the pods given (assigned or pending,
    nominated when their status says so), recording client, events and queue."""

    def __init__(self, snapshot: Snapshot, client: FakeClient, clock: FakeClock) -> None:
        self.snapshot = snapshot
        self.client = client
        self.clock = clock
        self.events = FakeEvents()
        self.parallelism = 16
        self.metrics = None
        self.pods: dict[str, Pod] = {}
        self.stores: dict[str, Store[Any]] = {}
        self.activated: list[Pod] = []

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        # A resource the test gave no objects for is an empty, synced cache.
        return self.stores.setdefault(request.resource, filled_store(()))

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return [p for p in self.pods.values() if p.namespace == namespace]

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return [
            p for p in self.pods.values() if p.nominated_node_name == node_name and not p.node_name
        ]

    def has_nominated_pods(self) -> bool:
        return any(p.nominated_node_name and not p.node_name for p in self.pods.values())

    def activate(self, pods: Sequence[Pod]) -> None:
        self.activated.extend(pods)


class Runner:
    """A profile of `plugins` over a cluster of `nodes` and `pods`, run by the Framework.

    `plugins` are `enable(...)` entries, PluginSpecs (enabled with default args, weight 1),
    or names of in-tree plugins ("NodeResourcesFit"). A profile needs one QueueSort
    plugin: PrioritySort is added when none of them is one. Pods with a nodeName are
    counted on their node; the others are pending (and nominated if their status says so).
    `objects` fills the informer stores plugins ask for, by InformerRequest.resource.
    """

    def __init__(
        self,
        plugins: Sequence[Enabled | PluginSpec | str],
        *,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        objects: Mapping[str, Iterable[Any]] | None = None,
        profile_name: str = "default-scheduler",
        columnar: bool = True,
    ) -> None:
        """`columnar=False` runs every plugin node by node, ignoring batch forms and
        memos: the reference that `check_fast_forms` compares the default against."""
        self._cache = Cache()
        self._snapshot = Snapshot()
        self.client = FakeClient()
        self.clock = FakeClock()
        self._services = _Services(self._snapshot, self.client, self.clock)
        for kind, objs in (objects or {}).items():
            self._services.stores[kind] = filled_store(objs)
        for node in nodes:
            self._cache.add_node(node)
        for pod in pods:
            self._add_pod(pod)
        profile, registry = _profile(profile_name, plugins)
        self.framework = Framework(profile, registry, self._services, columnar=columnar)
        # The scheduler's own cycle, evaluated in full (every node, no sampling).
        self._algorithm = Algorithm(0)

    def _add_pod(self, pod: Pod) -> None:
        self._services.pods[pod.uid] = pod
        if pod.node_name:
            self._cache.add_pod(pod)

    @property
    def events(self) -> FakeEvents:
        """What plugins recorded through `handle.events`."""
        return self._services.events

    @property
    def activated(self) -> list[Pod]:
        """The pods plugins moved to the active queue (`handle.activate`)."""
        return self._services.activated

    def plugin(self, name: str) -> Plugin:
        """The profile's instance of plugin `name`, as the runtime built it."""
        return self.framework.plugins[name]

    def update_node(self, node: Node) -> None:
        """Replace the node of that name (or add it), as an informer update does; the next
        cycle sees it."""
        self._cache.update_node(node)

    def assume(self, pod: Pod, node: str) -> Pod:
        """Count `pod` on `node` from the next cycle on, as the scheduler's cache does once
        a pod is scheduled; returns the placed copy."""
        placed = replace(pod, node_name=node)
        self._services.pods.pop(pod.uid, None)
        self._add_pod(placed)
        return placed

    async def schedule(self, pod: Pod) -> CycleResult:
        """PreEnqueue, PreFilter, Filter over every node, PreScore and Score over the
        feasible ones; see CycleResult for what each field holds."""
        fwk = self.framework
        self._cache.update_snapshot(self._snapshot)
        nodes = self._snapshot.node_infos()
        out = CycleResult(pod, CycleState())
        gated = fwk.run_pre_enqueue(pod)
        out.gate = gated[1] if gated is not None else None
        state = out.state
        ev = await self._algorithm.evaluate(fwk, state, pod, nodes, full=True)
        out.skipped_filters = frozenset(state.skip_filter_plugins)
        st = ev.pre_filter
        if st is not None:
            out.pre_filter = st
            if st.is_rejected():
                out.filter = {ni.name: st for ni in nodes}
            else:
                out.error = st
            return out
        statuses = ev.diagnosis.node_to_status
        allowed = ev.allowed
        # The nodes PreFilter left out hold its exclusion, named after the narrowing plugins.
        excluded = (
            statuses.absent.with_plugin(" ".join(ev.narrowed_by)) if statuses.absent else None
        )
        feasible = {ni.name for ni in ev.feasible}
        for ni in nodes:
            if allowed is not None and ni.name not in allowed and excluded is not None:
                out.filter[ni.name] = excluded
            elif ni.name in feasible:
                out.filter[ni.name] = FEASIBLE
            elif ni.name in statuses.statuses:
                out.filter[ni.name] = statuses.statuses[ni.name]
        if ev.filter_error is not None:
            # The pass stopped at the node whose Filter returned Error; later nodes never ran.
            out.filter[ev.error_node] = ev.filter_error
            out.error = ev.filter_error
            return out
        if ev.feasible:
            out.skipped_scores = frozenset(state.skip_score_plugins)
        if ev.score_error is not None:
            out.error = ev.score_error
            return out
        table = ev.table
        if table is not None:
            out.table = table
            out.scores = {ps.plugin: ScoresByNode.of(table.nodes, ps) for ps in table.plugins}
            out.totals = dict(zip(table.nodes, table.totals, strict=True))
            top = max(table.totals)
            out.best = tuple(n for n, t in out.totals.items() if t == top)
        return out

    def reserve(self, result: CycleResult, node: str | None = None) -> Status | None:
        """Reserve `result.pod` on `node` (default: the selected node) with the cycle's
        state; on a failure the runtime's Unreserve runs, as the scheduler does."""
        where = _node_for(result, node)
        st = self.framework.run_reserve(result.state, result.pod, where)
        if st is not None and not st.is_success():
            self.framework.run_unreserve(result.state, result.pod, where)
        return st

    def unreserve(self, result: CycleResult, node: str | None = None) -> None:
        self.framework.run_unreserve(result.state, result.pod, _node_for(result, node))

    def permit(self, result: CycleResult, node: str | None = None) -> Status | None:
        """Permit: None, a rejection, or Wait (the pod is then in framework.waiting_pods;
        advance `clock` and await `framework.wait_on_permit(pod)` to see it time out)."""
        return self.framework.run_permit(result.state, result.pod, _node_for(result, node))


def _node_for(result: CycleResult, node: str | None) -> str:
    where = node or result.selected
    if where is None:
        raise ValueError(f"{result.pod.key}: no node selected; pass node=")
    return where


def _profile(
    profile_name: str, plugins: Sequence[Enabled | PluginSpec | str]
) -> tuple[ProfileSpec, Registry]:
    """The ProfileSpec and Registry the config loader would make of these plugins."""
    registry = Registry()
    entries: list[Enabled] = []
    in_tree: Registry | None = None
    for p in plugins:
        if isinstance(p, str):
            in_tree = in_tree or in_tree_registry()
            entry = Enabled(in_tree.get(p))
        else:
            entry = p if isinstance(p, Enabled) else Enabled(p)
        registry.register(entry.spec)  # two plugins of one name: DuplicatePluginError
        entries.append(entry)
    points: dict[str, list[tuple[str, int]]] = {}
    for entry in entries:
        for point in entry.enabled_points():
            weighted = point in (ExtensionPoint.SCORE, ExtensionPoint.PLACEMENT_SCORE)
            weight = entry.weight if weighted else 0
            points.setdefault(point, []).append((entry.spec.name, weight))
    if ExtensionPoint.QUEUE_SORT not in points:
        registry.register(PRIORITY_SORT_SPEC)
        points[ExtensionPoint.QUEUE_SORT] = [(PRIORITY_SORT_SPEC.name, 0)]
    args = {e.spec.name: e.parsed_args() for e in entries}
    return ProfileSpec(profile_name, points, args), registry
