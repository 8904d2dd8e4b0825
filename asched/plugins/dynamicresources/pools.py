"""Which devices a node can use: the pools of its ResourceSlices (Go's GatherPools).

Follows structured/internal/incubating's GatherPools, addSlice, buildPool,
checkSlicesInPool and their validations (kube-scheduler 1.37's default gates select that
allocator). For one node, a pool's slices that target the node are taken at the newest
generation among them. If there are as many as the pool's resourceSliceCount the pool is
complete (even when a newer generation exists elsewhere, as in Go); otherwise every slice
of the pool decides: a newer generation anywhere makes the pool obsolete (it is left
out), and the pool is complete only if the cluster has all slices of that generation;
the pool then also knows the devices and counter sets of its slices for other nodes.
A slice with `perDeviceNodeSelection` targets the node when one of its devices does.

Partitionable devices (DRAPartitionableDevices, beta in 1.37): slices with
`sharedCounters` hold the pool's counter sets; a device's `consumesCounters` draw on
them. A pool is invalid (offers nothing, and a node that then cannot satisfy the claims
fails with "invalid resource pools were encountered") when its node's device slices
repeat a device name, two slices declare one counter set, or a device consumes a counter
set or counter the pool lacks.

Order, as Go's: pools sorted by (driver, pool), those with devices that have binding
conditions after all others; a pool's node slices sorted by name, devices in spec order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from asched.api.dra import Device, ResourceSlice
from asched.api.labels import NodeSelector
from asched.plugins.dynamicresources.devicememo import DeviceMemo
from asched.plugins.dynamicresources.outcomes import NodeOutcomes

DeviceID = tuple[str, str, str]  # (driver, pool, device)
PoolKey = tuple[str, str]  # (driver, pool)


@dataclass(frozen=True, slots=True)
class Candidate:
    id: DeviceID
    device: Device
    slice: ResourceSlice


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    # The pool's devices on slices that target the node, in slice-name then spec order.
    devices: list[Candidate] = field(default_factory=list)
    # Devices of the pool's slices for other nodes (known only when the pool had to be
    # completed from them): their allocations still draw on the pool's counters.
    other_devices: list[Candidate] = field(default_factory=list)
    # counter set -> counter -> capacity (sharedCounters).
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)


class NodePools:
    """One node's pools, and whether the allocator may keep its outcomes there
    (outcomes.py): `plain_devices` lists the node's devices when every pool is usable,
    has no counter sets and no devices of other nodes, and no device is shared, consumes
    counters or selects its own nodes; otherwise it is None."""

    __slots__ = ("plain_devices", "pools")

    def __init__(self, pools: list[Pool]) -> None:
        self.pools = pools
        self.plain_devices: tuple[DeviceID, ...] | None = None
        if all(_plain(p) for p in pools):
            self.plain_devices = tuple(c.id for p in pools for c in p.devices)


def _plain(pool: Pool) -> bool:
    if not pool.usable or pool.counter_sets or pool.other_devices:
        return False
    return not any(
        c.device.allow_multiple_allocations
        or c.device.consumes_counters
        or c.slice.per_device_node_selection
        for c in pool.devices
    )


def node_matches(
    node_name: str,
    labels: Mapping[str, str],
    target_name: str,
    all_nodes: bool,
    selector: NodeSelector | None,
) -> bool:
    """Go's NodeMatches for a slice's or a device's nodeName / allNodes / nodeSelector."""
    if target_name:
        return target_name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(labels, node_name)
    return False


def device_targets_node(device: Device, node_name: str, labels: Mapping[str, str]) -> bool:
    return node_matches(node_name, labels, device.node_name, device.all_nodes, device.node_selector)


def slice_targets_node(slice_: ResourceSlice, node_name: str, labels: Mapping[str, str]) -> bool:
    if slice_.node_name or slice_.all_nodes or slice_.node_selector is not None:
        return node_matches(
            node_name, labels, slice_.node_name, slice_.all_nodes, slice_.node_selector
        )
    if slice_.per_device_node_selection:
        return any(device_targets_node(d, node_name, labels) for d in slice_.devices)
    return False  # some future way of selecting nodes: Go skips the slice


def _has_binding_conditions(pool: Pool) -> bool:
    """poolHasBindingConditions: such pools are tried after all others."""
    return any(c.device.binding_conditions for c in pool.devices)


class SliceIndex:
    """A set of ResourceSlices, indexed once so each node's Filter only looks at its own
    slices and the few that are not bound to one node (GatherPools per node would
    otherwise read every slice of the cluster for every node).

    The plugin keeps one index for as long as the informers hold the same slices
    (SliceIndexCache), so a node's pools are gathered once, not once per pod: they depend
    only on the slices and the node's name and labels. The pools it returns are shared
    between callers and must not be changed."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self.memo = DeviceMemo()
        self.outcomes = NodeOutcomes()
        # node name -> (its labels when gathered, its pools).
        self._node_pools: dict[str, tuple[dict[str, str], NodePools]] = {}
        # pool -> generation -> how many slices the cluster has of it (checkSlicesInPool).
        self._generations: dict[PoolKey, dict[int, int]] = {}
        self._by_pool: dict[PoolKey, list[ResourceSlice]] = {}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        for s in slices:
            counts = self._generations.setdefault((s.driver, s.pool), {})
            counts[s.pool_generation] = counts.get(s.pool_generation, 0) + 1
            self._by_pool.setdefault((s.driver, s.pool), []).append(s)
            if s.node_name:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)

    def pools(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        """Go's GatherPools for one node."""
        return self.node(node_name, labels).pools

    def node(self, node_name: str, labels: Mapping[str, str]) -> NodePools:
        """The node's pools, gathered again only when its labels change."""
        kept = self._node_pools.get(node_name)
        if kept is not None and kept[0] == labels:
            return kept[1]
        gathered = NodePools(self._gather(node_name, labels))
        self._node_pools[node_name] = (dict(labels), gathered)
        return gathered

    def _gather(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        targeting: dict[PoolKey, list[ResourceSlice]] = {}
        candidates = [
            *self._by_node.get(node_name, ()),
            *(s for s in self._shared if slice_targets_node(s, node_name, labels)),
        ]
        for s in candidates:
            kept = targeting.setdefault((s.driver, s.pool), [])
            if kept and s.pool_generation < kept[0].pool_generation:
                continue
            if kept and s.pool_generation > kept[0].pool_generation:
                kept.clear()
            kept.append(s)
        pools: list[Pool] = []
        later: list[Pool] = []
        for key in sorted(targeting):
            pool = self._pool(key, targeting[key])
            if pool is None:
                continue
            (later if _has_binding_conditions(pool) else pools).append(pool)
        return pools + later

    def _pool(self, key: PoolKey, slices: list[ResourceSlice]) -> Pool | None:
        driver, name = key
        generation, wanted = slices[0].pool_generation, slices[0].pool_slice_count
        others: list[ResourceSlice] = []
        if len(slices) != wanted:
            counts = self._generations[key]
            if any(g > generation for g in counts):
                return None  # obsolete: the driver is replacing this generation
            if counts[generation] != wanted:
                return Pool(driver, name, incomplete=True)
            names = {s.name for s in slices}
            others = [
                s
                for s in self._by_pool[key]
                if s.pool_generation == generation and s.name not in names
            ]
        return _build_pool(driver, name, sorted(slices, key=lambda s: s.name), others)


def _build_pool(
    driver: str, name: str, targeting: list[ResourceSlice], others: list[ResourceSlice]
) -> Pool:
    """buildPool: the node's device slices, the counter sets of every counter slice,
    and the devices of the pool's other slices; invalid when validation fails."""
    pool = Pool(driver, name)
    counter_slices = [s for s in (*targeting, *others) if s.shared_counters]
    for s in targeting:
        if not s.shared_counters:
            pool.devices.extend(Candidate((driver, name, d.name), d, s) for d in s.devices)
    for s in others:
        if not s.shared_counters:
            pool.other_devices.extend(Candidate((driver, name, d.name), d, s) for d in s.devices)
    if len({c.id for c in pool.devices}) != len(pool.devices):
        return Pool(driver, name, invalid=True)  # validateDeviceNames
    for s in counter_slices:
        for counter_set in s.shared_counters:
            if counter_set.name in pool.counter_sets:
                return Pool(driver, name, invalid=True)  # getAndValidateCounterSets
            pool.counter_sets[counter_set.name] = counter_set.counters
    if not _consumption_valid(pool.counter_sets, (*pool.devices, *pool.other_devices)):
        return Pool(driver, name, invalid=True)  # validateDeviceCounterConsumption
    return pool


def _consumption_valid(
    counter_sets: Mapping[str, Mapping[str, Fraction]], devices: Iterable[Candidate]
) -> bool:
    for c in devices:
        for consumption in c.device.consumes_counters:
            counters = counter_sets.get(consumption.counter_set)
            if counters is None or any(n not in counters for n in consumption.counters):
                return False
    return True


class SliceIndexCache:
    """One SliceIndex kept across pods while the informers' slices and DeviceTaintRules
    are the same objects.

    An informer replaces a stored object on every update and drops it on delete, so the
    lists differ by identity exactly when a ResourceSlice or DeviceTaintRule event came
    in: that is when the index, its nodes' pools and its device memo are rebuilt. The
    previous lists are held, so their objects' identities cannot be reused meanwhile.
    """

    def __init__(self) -> None:
        self._slices: Sequence[ResourceSlice] = ()
        self._rules: Sequence[object] = ()
        self._index: SliceIndex | None = None

    def index(
        self,
        slices: Sequence[ResourceSlice],
        rules: Sequence[object],
        build: Callable[[], Sequence[ResourceSlice]],
    ) -> SliceIndex:
        """The index of `build()` (the slices as the scheduler sees them, made from
        `slices` and `rules`), rebuilt only when either list holds other objects."""
        if self._index is None or not (_same(slices, self._slices) and _same(rules, self._rules)):
            self._index = SliceIndex(build())
            self._slices, self._rules = slices, rules
        return self._index


def _same(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
