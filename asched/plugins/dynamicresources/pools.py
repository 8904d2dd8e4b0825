"""Which devices a node can use: the pools of its ResourceSlices (Go's GatherPools).

Follows structured/internal/stable's GatherPools, addSlice, checkSlicesInPool and
validateDeviceNames. For one node, a pool's slices that target the node are taken at the
newest generation among them. If there are as many as the pool's resourceSliceCount the
pool is complete (even when a newer generation exists elsewhere, as in Go); otherwise
every slice of the pool decides: a newer generation anywhere makes the pool obsolete (it
is left out), and the pool is complete only if the cluster has all slices of that
generation. A pool whose node slices repeat a device name is invalid: it offers nothing,
and a node that then cannot satisfy the claims fails with "invalid resource pools were
encountered". Go walks the pools in map order and a pool's slices in lister order, so
neither order is deterministic there; asched sorts pools by (driver, pool) and slices by
name, so tests know which device a claim gets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from asched.api.dra import Device, ResourceSlice

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

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)


def slice_targets_node(slice_: ResourceSlice, node_name: str, labels: Mapping[str, str]) -> bool:
    if slice_.node_name:
        return slice_.node_name == node_name
    if slice_.all_nodes:
        return True
    if slice_.node_selector is not None:
        return slice_.node_selector.matches(labels, node_name)
    return False


class SliceIndex:
    """All ResourceSlices of one cycle, indexed once so each node's Filter only looks at
    its own slices and the few that are not bound to one node (GatherPools per node would
    otherwise read every slice of the cluster for every node)."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        # pool -> generation -> how many slices the cluster has of it (checkSlicesInPool).
        self._generations: dict[PoolKey, dict[int, int]] = {}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        for s in slices:
            counts = self._generations.setdefault((s.driver, s.pool), {})
            counts[s.pool_generation] = counts.get(s.pool_generation, 0) + 1
            if s.node_name:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)

    def pools(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        """Go's GatherPools for one node."""
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
        pools = []
        for key in sorted(targeting):
            pool = self._pool(key, targeting[key])
            if pool is not None:
                pools.append(pool)
        return pools

    def _pool(self, key: PoolKey, slices: list[ResourceSlice]) -> Pool | None:
        driver, name = key
        generation, wanted = slices[0].pool_generation, slices[0].pool_slice_count
        if len(slices) != wanted:
            counts = self._generations[key]
            if any(g > generation for g in counts):
                return None  # obsolete: the driver is replacing this generation
            if counts[generation] != wanted:
                return Pool(driver, name, incomplete=True)
        pool = Pool(driver, name)
        for s in sorted(slices, key=lambda s: s.name):
            pool.devices.extend(Candidate((driver, name, d.name), d, s) for d in s.devices)
        if len({c.id for c in pool.devices}) != len(pool.devices):
            # validateDeviceNames: duplicate device name.
            return Pool(driver, name, invalid=True)
        return pool
