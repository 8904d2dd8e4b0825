"""Columnar node state: what Filter and Score read for every node, as numpy arrays.

A scheduling cycle asks the same questions of hundreds or thousands of nodes ("is there
room for 100m cpu?", "how allocated is memory?"). Asked one NodeInfo at a time in Python
that costs microseconds per node and plugin; asked of an array it costs microseconds per
plugin. `NodeColumns` keeps one row per node of the snapshot, aligned with its node list,
and the snapshot updates a row whenever it stores a changed NodeInfo (assume, forget, a
pod or node event), so nothing is rebuilt per cycle.

Plugins opt in with the batch protocols in asched.framework.interfaces (BatchFilterPlugin,
BatchScorePlugin); their per-node methods stay, and must give the same answers: the
property tests in tests/unit/framework/test_columns_agree.py hold both to that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import count, repeat
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from asched.api import Node
from asched.api.labels import Requirement
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Status

Int64s = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
_PREFER_NO_SCHEDULE = "PreferNoSchedule"

# Cached requirement masks per label column (see LabelColumn.mask).
_MAX_MASKS = 512
# Node-derived columns kept at once (NodeColumns.from_node); the oldest goes first.
_MAX_DERIVED = 64
_node_serials = count(1)
T = TypeVar("T")

_INT_COLUMNS = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_eph",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "req_eph",
    "nz_cpu",
    "nz_mem",
    "pod_count",
    "generation",
    "node_serial",
)
_BOOL_COLUMNS = (
    "unschedulable",
    "hard_taints",
    "prefer_taints",
    "has_images",
    "has_ports",
    "with_affinity",
    "with_required_anti_affinity",
)


class NodeColumns:
    """Per-node arrays; row i describes `infos[i]`.

    Integer columns hold the same int values as NodeInfo's Resource fields (milli-cpu,
    bytes, pod counts), so arithmetic on them equals the per-node code's.
    """

    __slots__ = (
        *_INT_COLUMNS,
        *_BOOL_COLUMNS,
        "_annotations",
        "_derived",
        "_labels",
        "_without_cpu_or_memory",
        "affinity_version",
        "anti_affinity_version",
        "epoch",
        "info_array",
        "infos",
        "name_array",
        "names",
        "node_version",
        "version",
    )

    alloc_cpu: Int64s
    alloc_mem: Int64s
    alloc_eph: Int64s
    alloc_pods: Int64s
    req_cpu: Int64s
    req_mem: Int64s
    req_eph: Int64s
    nz_cpu: Int64s
    nz_mem: Int64s
    pod_count: Int64s
    # NodeInfo.generation: unique per NodeInfo state, so an unchanged value means an
    # unchanged node (NodeMemo compares it to find the rows changed since its last look).
    generation: Int64s
    # Which Node object the row holds: a new serial whenever the row's Node object is
    # replaced (a node update), kept while only its pods change, and kept for a node whose
    # row moves in a rebuild. What a node-static column or memo (NodeStaticPlugin)
    # compares to find the rows to recompute.
    node_serial: Int64s
    # spec.unschedulable; any NoSchedule/NoExecute taint; any PreferNoSchedule taint.
    unschedulable: Bools
    hard_taints: Bools
    prefer_taints: Bools
    # The node reports container images (ImageLocality has nothing to score elsewhere).
    has_images: Bools
    # Some pod on the node holds a host port (NodePorts has nothing to check elsewhere).
    has_ports: Bools
    # Some pod on the node has pod (anti-)affinity; some has required anti-affinity.
    with_affinity: Bools
    with_required_anti_affinity: Bools

    def __init__(self, infos: Sequence[NodeInfo] = ()) -> None:
        # `epoch` moves when rows are renumbered (rebuild), `version` on every change.
        # The affinity versions move only when a row that is or was in `with_affinity`
        # (`with_required_anti_affinity`) changes: the snapshot's lists of those nodes
        # stay valid while most cycles change only other rows.
        self.epoch = 0
        self.version = 0
        # Moves whenever some row's node_serial does (a Node object replaced, a rebuild):
        # node-derived columns skip their stale-row scan while it stands still.
        self.node_version = 0
        self.affinity_version = 0
        self.anti_affinity_version = 0
        self.rebuild(infos)

    def rebuild(self, infos: Sequence[NodeInfo]) -> None:
        """All rows from scratch: only when the snapshot's node list itself changes."""
        # A node that keeps its Node object keeps its serial, so memos survive the rebuild
        # that a node added elsewhere causes (see node_serial).
        kept: dict[str, tuple[Node | None, int]] = {}
        if self.epoch:
            kept = {
                ni.name: (ni.node, s)
                for ni, s in zip(self.infos, self.node_serial.tolist(), strict=True)
            }
        self.epoch += 1
        self.version += 1
        self.node_version += 1
        self.affinity_version += 1
        self.anti_affinity_version += 1
        self.infos: list[NodeInfo] = list(infos)
        # The same NodeInfos as an object array: gathering many rows' NodeInfos by index
        # array (infos_at) is one numpy call instead of a Python loop over the rows.
        self.info_array: npt.NDArray[np.object_] = np.empty(len(self.infos), dtype=object)
        self.info_array[:] = self.infos
        self.names: list[str] = [ni.name for ni in self.infos]
        # And the names: a Filter pass takes its rejected nodes' names in one gather.
        self.name_array: npt.NDArray[np.object_] = np.empty(len(self.infos), dtype=object)
        self.name_array[:] = self.names
        # Label key -> its codes per row; built on first use, then kept current by _write.
        self._labels: dict[str, LabelColumn] = {}
        # Annotation columns and other node-derived columns: built on first use and
        # refreshed when read (DerivedColumn), so a pod's bind costs them nothing.
        self._annotations: dict[str, LabelColumn] = {}
        self._derived: dict[object, DerivedColumn[Any]] = {}
        n = len(self.infos)
        for name in _INT_COLUMNS:
            setattr(self, name, np.zeros(n, dtype=np.int64))
        for name in _BOOL_COLUMNS:
            setattr(self, name, np.zeros(n, dtype=np.bool_))
        for i, ni in enumerate(self.infos):
            held = kept.get(ni.name)
            self.node_serial[i] = (
                held[1] if held is not None and held[0] is ni.node else next(_node_serials)
            )
            self._write(i, ni)
        self._without_cpu_or_memory = int(np.count_nonzero(self._lacks_cpu_or_memory()))

    def _lacks_cpu_or_memory(self) -> Bools:
        lacks: Bools = (self.alloc_cpu == 0) | (self.alloc_mem == 0)
        return lacks

    def _lacks_cpu_or_memory_at(self, i: int) -> int:
        return int(self.alloc_cpu[i] == 0 or self.alloc_mem[i] == 0)

    @property
    def cpu_memory_everywhere(self) -> bool:
        """Every row has non-zero cpu and memory allocatable: the usual cluster, where
        the cpu+memory array scorers take their shorter forms (array_scorers)."""
        return self._without_cpu_or_memory == 0

    def __len__(self) -> int:
        return len(self.infos)

    def infos_at(self, rows: Int64s) -> list[NodeInfo]:
        """The NodeInfos of `rows`, in that order."""
        found: list[NodeInfo] = self.info_array[rows].tolist()
        return found

    # ---- the public accessors (docs/plugins.md, "The column API") --------------------
    def label(self, key: str) -> LabelColumn:
        """The values of label `key` per node, as codes (-1: the node lacks the label)."""
        col = self._labels.get(key)
        if col is None:
            col = self._labels[key] = LabelColumn(key, self.infos)
        return col

    def annotation(self, key: str) -> LabelColumn:
        """The values of node annotation `key` per node, coded like labels."""
        col = self._annotations.get(key)
        if col is None:
            col = self._annotations[key] = LabelColumn(key, self.infos, annotations=True)
        return col

    def allocatable(self, resource: str, rows: Int64s) -> Int64s:
        """Allocatable `resource` of each of `rows`: milli-cpu for "cpu", bytes for
        memory and ephemeral-storage, a count for "pods" and extended resources
        (`nvidia.com/gpu`); 0 where the node has none. Read-only."""
        own = _ALLOCATABLE.get(resource)
        if own is not None:
            values: Int64s = getattr(self, own)[rows]
            return values
        col = self._derived.get(("allocatable", resource))
        if col is None:  # built once per resource, not per call
            col = self._keep(
                ("allocatable", resource),
                DerivedColumn(_node_fn(_allocatable_of(resource)), np.int64, by_node=True),
            )
        return col.values_at(self, rows)

    def requested(self, resource: str, rows: Int64s) -> Int64s:
        """What the pods on each of `rows` request of `resource` (as NodeInfo.requested),
        in allocatable's units. Read-only."""
        own = _REQUESTED.get(resource)
        if own is not None:
            values: Int64s = getattr(self, own)[rows]
            return values
        col = self._derived.get(("requested", resource))
        if col is None:
            col = self._keep(("requested", resource), _requested_column(resource))
        return col.values_at(self, rows)

    def has_taint(self, key: str, rows: Int64s, effect: str | None = None) -> Bools:
        """Whether each of `rows` has a taint `key` (of `effect`, when given)."""
        return self.from_node(("taint", key, effect), _taint_test(key, effect), np.bool_)[rows]

    def from_node(
        self, key: object, compute: Callable[[Node], int | bool], dtype: type = np.int64
    ) -> npt.NDArray[Any]:
        """A column of `compute(node)` for every row, under `key`: computed once per Node
        object (a row is recomputed only when its node is updated; rows whose NodeInfo has
        no Node get 0), for all rows. `compute` must read nothing but the Node. Keep `key`
        stable (a tuple of your plugin's name and args), not a new lambda per call."""
        col = self._derived.get(key)
        if col is None:
            col = self._keep(key, DerivedColumn(_node_fn(compute), dtype, by_node=True))
        return col.values_at(self, None)

    def _keep(self, key: object, col: DerivedColumn[Any]) -> DerivedColumn[Any]:
        if len(self._derived) >= _MAX_DERIVED:
            del self._derived[next(iter(self._derived))]
        self._derived[key] = col
        return col

    def set_row(self, i: int, ni: NodeInfo) -> None:
        prev = self.infos[i]
        if prev.node is not ni.node:
            self.node_serial[i] = next(_node_serials)
            self.node_version += 1
        self.version += 1
        if self.with_affinity[i] or ni.pods_with_affinity:
            self.affinity_version += 1
        if self.with_required_anti_affinity[i] or ni.pods_with_required_anti_affinity:
            self.anti_affinity_version += 1
        self.infos[i] = ni
        self.info_array[i] = ni
        if ni.node is not None and prev.node is ni.node and prev.allocatable is ni.allocatable:
            # Only the node's pods changed (an assume, a forget, a pod event): what the
            # Node object and its allocatable decide is already in the row. Most writes
            # are this kind, a group cycle's simulation two per member.
            self._write_pods(i, ni)
            return
        self.names[i] = ni.name
        self.name_array[i] = ni.name
        lacked = self._lacks_cpu_or_memory_at(i)
        self._write(i, ni)
        self._without_cpu_or_memory += self._lacks_cpu_or_memory_at(i) - lacked

    def _write_pods(self, i: int, ni: NodeInfo) -> None:
        """The columns that follow the node's pods (and the generation)."""
        req, nz = ni.requested, ni.non_zero_requested
        self.req_cpu[i] = req.milli_cpu
        self.req_mem[i] = req.memory
        self.req_eph[i] = req.ephemeral_storage
        self.nz_cpu[i] = nz.milli_cpu
        self.nz_mem[i] = nz.memory
        self.pod_count[i] = len(ni.pods)
        self.generation[i] = ni.generation
        self.has_ports[i] = bool(ni.used_ports)
        self.with_affinity[i] = bool(ni.pods_with_affinity)
        self.with_required_anti_affinity[i] = bool(ni.pods_with_required_anti_affinity)
        node = ni.node
        self.has_images[i] = bool(ni.image_states) or (node is not None and bool(node.images))

    def _write(self, i: int, ni: NodeInfo) -> None:
        alloc = ni.allocatable
        self.alloc_cpu[i] = alloc.milli_cpu
        self.alloc_mem[i] = alloc.memory
        self.alloc_eph[i] = alloc.ephemeral_storage
        self.alloc_pods[i] = alloc.allowed_pods
        self._write_pods(i, ni)
        node = ni.node
        for col in self._labels.values():
            col.set(i, ni)
        for col in self._annotations.values():
            col.set(i, ni)
        if node is None:
            self.unschedulable[i] = self.hard_taints[i] = self.prefer_taints[i] = False
            return
        self.unschedulable[i] = node.unschedulable
        self.hard_taints[i] = any(t.effect in _DO_NOT_SCHEDULE for t in node.taints)
        self.prefer_taints[i] = any(t.effect == _PREFER_NO_SCHEDULE for t in node.taints)


class LabelColumn:
    """One label key over every node: `codes[row]` indexes `values`, -1 when absent.

    Codes are only ever added, so a value keeps its code while the column lives; plugins
    map per-value numbers (a domain's pod count) to rows with `per_value[codes]`.
    """

    __slots__ = ("_annotations", "_code_of", "_mapped", "_masks", "codes", "key", "values")

    def __init__(self, key: str, infos: Sequence[NodeInfo], *, annotations: bool = False) -> None:
        self.key = key
        self._annotations = annotations
        # (fn, missing, dtype) -> fn per value code (see map_values).
        self._mapped: dict[tuple[object, object, object], npt.NDArray[Any]] = {}
        self.values: list[str] = []
        self._code_of: dict[str, int] = {}
        # Requirement -> its verdict per value code, then for "no such label" (see mask).
        self._masks: dict[Requirement, Bools] = {}
        self.codes: Int64s = np.full(len(infos), -1, dtype=np.int64)
        for i, ni in enumerate(infos):
            self.set(i, ni)

    def code(self, value: str) -> int | None:
        return self._code_of.get(value)

    def counts_at(self, counts: Mapping[str, int], rows: Int64s) -> Int64s:
        """`counts[value of row]` for each of `rows`, 0 where the value is not counted or
        the node lacks the label. Costs one numpy pass plus one step per counted value,
        so a count over a handful of domains stays cheap on a label with 15000 values."""
        per_value = np.zeros(len(self.values) + 1, dtype=np.int64)  # [-1]: no label
        if counts:
            n = len(counts)
            codes = np.fromiter(map(self._code_of.get, counts, repeat(-1)), np.int64, n)
            amounts = np.fromiter(counts.values(), np.int64, n)
            known = codes >= 0  # a counted value no node carries any more stays out
            per_value[codes[known]] = amounts[known]
        out: Int64s = per_value[self.codes[rows]]
        return out

    def mask(self, req: Requirement) -> Bools:
        """Requirement `req` (on this column's key) decided once per distinct value.

        Entry `code` is req.matches on a node whose label has value `values[code]`, the
        last entry req.matches on a node without the label, so `mask(req)[codes]` is the
        verdict per row (code -1 picks the last). A requirement reads nothing but the
        value of its key, so this equals calling it node by node. Values only ever get
        new codes, so a cached mask is extended, never recomputed.
        """
        cached = self._masks.get(req)
        n = len(self.values)
        if cached is not None and len(cached) == n + 1:
            return cached
        known = 0 if cached is None else len(cached) - 1
        out = np.empty(n + 1, dtype=np.bool_)
        if cached is not None:
            out[:known] = cached[:known]
        key = self.key
        for code in range(known, n):
            out[code] = req.matches({key: self.values[code]})
        out[n] = req.matches({})
        if len(self._masks) >= _MAX_MASKS:
            self._masks.clear()  # many distinct selectors: keep memory bounded
        self._masks[req] = out
        return out

    def at(self, rows: Int64s) -> Int64s:
        """The codes of `rows` (-1 where the node lacks the key)."""
        out: Int64s = self.codes[rows]
        return out

    def isin(self, values: Iterable[str], rows: Int64s) -> Bools:
        """Whether each of `rows` has one of `values` (False where the key is absent)."""
        per_code = np.zeros(len(self.values) + 1, dtype=np.bool_)  # [-1]: absent
        for v in values:
            code = self._code_of.get(v)
            if code is not None:
                per_code[code] = True
        out: Bools = per_code[self.codes[rows]]
        return out

    def present(self, rows: Int64s) -> Bools:
        """Whether each of `rows` has the key at all."""
        out: Bools = self.codes[rows] >= 0
        return out

    def matches(self, req: Requirement, rows: Int64s) -> Bools:
        """Requirement `req` (a node-selector requirement on this key) per row."""
        out: Bools = self.mask(req)[self.codes[rows]]
        return out

    def map_values(
        self, fn: Callable[[str], T], rows: Int64s, *, missing: T, dtype: type = np.int64
    ) -> npt.NDArray[Any]:
        """`fn(value)` for each of `rows`, `missing` where the key is absent. `fn` runs
        once per distinct value, ever (results are kept per `fn`, so pass the same
        function object each time: a module-level function or a bound method kept on the
        plugin). `fn` must be pure."""
        slot = (fn, missing, dtype)
        cached = self._mapped.get(slot)
        n = len(self.values)
        if cached is None or len(cached) != n + 1:
            known = 0 if cached is None else len(cached) - 1
            out: npt.NDArray[Any] = np.empty(n + 1, dtype=dtype)
            if cached is not None:
                out[:known] = cached[:known]
            for code in range(known, n):
                out[code] = fn(self.values[code])
            out[n] = missing
            if len(self._mapped) >= _MAX_MASKS:
                self._mapped.clear()
            self._mapped[slot] = cached = out
        result: npt.NDArray[Any] = cached[self.codes[rows]]
        return result

    def set(self, i: int, ni: NodeInfo) -> None:
        node = ni.node
        source = None if node is None else node.annotations if self._annotations else node.labels
        value = None if source is None else source.get(self.key)
        if value is None:
            self.codes[i] = -1
            return
        code = self._code_of.get(value)
        if code is None:
            code = self._code_of[value] = len(self.values)
            self.values.append(value)
        self.codes[i] = code


class NodeRows(list[NodeInfo]):
    """A list of NodeInfos that knows its rows in a NodeColumns.

    The snapshot's node list is one (rows 0..n-1), and the runtime hands the feasible
    nodes of a columnar Filter pass to Score as one, so Score can index the columns
    without looking nodes up.
    """

    __slots__ = ("columns", "rows")

    def __init__(self, items: Iterable[NodeInfo], columns: NodeColumns, rows: Int64s) -> None:
        super().__init__(items)
        self.columns = columns
        # A slice of a larger array (the first `limit` of all rows) would keep the whole
        # base alive in every CycleState that stores it (PodTopologySpread's PreScore
        # does, for the pod's whole binding cycle): keep only our rows.
        self.rows = rows.copy() if rows.base is not None else rows


def subset(cols: NodeColumns, mask: Bools) -> NodeRows:
    """The rows where `mask` holds, in row order, as a NodeRows."""
    rows = np.flatnonzero(mask)
    return NodeRows(cols.infos_at(rows), cols, rows)


class Unbatchable(Exception):
    """Raised by filter_batch / score_batch: this pod (or profile setting) has no batch
    form here; the runtime runs the per-node method instead. Not an error."""


@dataclass(slots=True)
class BatchVerdict:
    """A batch Filter's answer for `rows`: which pass, and the status of one that fails.

    `status_at(k)` is called only for positions k where `passed[k]` is False, and returns
    exactly the Status the per-node Filter returns for that node. A plugin whose statuses
    come from a fixed set says so with `coded` or `constant` instead, and the runtime
    then labels the rejections without calling back per node.
    """

    passed: Bools
    status_at: Callable[[int], Status]
    # With `table`: codes[k] >= 1 is the rejection table[codes[k] - 1] (0: passes).
    codes: npt.NDArray[np.int8] | None = None
    table: tuple[Status, ...] = ()

    @classmethod
    def coded(cls, codes: npt.NDArray[np.int8], table: tuple[Status, ...]) -> BatchVerdict:
        """Rows pass where codes is 0, else fail with table[code - 1]."""

        def status_at(k: int) -> Status:
            return table[int(codes[k]) - 1]

        return cls(codes == 0, status_at, codes, table)

    @classmethod
    def constant(cls, passed: Bools, st: Status) -> BatchVerdict:
        """Every failing row fails with `st`."""
        return cls(passed, constant_status(st), None, (st,))


def constant_status(st: Status) -> Callable[[int], Status]:
    """status_at for a plugin that rejects every failing node with the same status."""

    def at(_k: int) -> Status:
        return st

    return at


class DerivedColumn(Generic[T]):
    """One value per row computed from the row's NodeInfo, recomputed only for the rows
    whose source column moved since the last read: `node_serial` (the Node object) for
    columns that read only the Node, `generation` (any change) otherwise."""

    __slots__ = ("_by_node", "_compute", "_dtype", "_epoch", "_seen", "_seen_version", "_values")

    def __init__(self, compute: Callable[[NodeInfo], T], dtype: type, *, by_node: bool) -> None:
        self._compute = compute
        self._dtype = dtype
        self._by_node = by_node
        self._epoch = -1
        # The columns' node_version (or version) when every row was last brought up to
        # date: while it stands, no row can be stale.
        self._seen_version = -1
        self._seen: Int64s = np.zeros(0, dtype=np.int64)
        self._values: npt.NDArray[Any] = np.zeros(0, dtype=dtype)

    def values_at(
        self,
        cols: NodeColumns,
        rows: Int64s | None,
        compute: Callable[[NodeInfo], T] | None = None,
    ) -> npt.NDArray[Any]:
        """The values of `rows` (all rows for None), recomputing stale rows first with
        `compute` (default: the column's own). A `compute` that raises leaves the rows
        it did not finish stale, so the next read recomputes them."""
        version = cols.node_version if self._by_node else cols.version
        if version != self._seen_version:
            source = cols.node_serial if self._by_node else cols.generation
            if self._epoch != cols.epoch:
                self._epoch = cols.epoch
                self._carry_over(source)
            stale = np.flatnonzero(self._seen != source)
            if stale.size:
                infos, values = cols.infos, self._values
                fn = self._compute if compute is None else compute
                for r in stale.tolist():
                    values[r] = fn(infos[r])
                self._seen[stale] = source[stale]
            self._seen_version = version
        return self._values if rows is None else self._values[rows]

    def _carry_over(self, source: Int64s) -> None:
        """The rows were renumbered (a node added or removed): keep the value of every
        row whose source value (node serial or generation, unique to one Node object or
        NodeInfo state) was seen before, wherever its row is now."""
        old_seen, old_values = self._seen, self._values
        self._seen = np.full(len(source), -1, dtype=np.int64)
        self._values = np.zeros(len(source), dtype=self._dtype)
        if not old_seen.size or not source.size:
            return
        order = np.argsort(old_seen)
        ranked = old_seen[order]
        at = np.minimum(np.searchsorted(ranked, source), len(ranked) - 1)
        found = (ranked[at] == source) & (source >= 0)
        self._seen[found] = source[found]
        self._values[found] = old_values[order[at[found]]]


_ALLOCATABLE = {
    "cpu": "alloc_cpu",
    "memory": "alloc_mem",
    "ephemeral-storage": "alloc_eph",
    "pods": "alloc_pods",
}
_REQUESTED = {
    "cpu": "req_cpu",
    "memory": "req_mem",
    "ephemeral-storage": "req_eph",
    "pods": "pod_count",
}


def _node_fn(compute: Callable[[Node], int | bool]) -> Callable[[NodeInfo], int | bool]:
    def of(ni: NodeInfo) -> int | bool:
        return 0 if ni.node is None else compute(ni.node)

    return of


def _allocatable_of(resource: str) -> Callable[[Node], int]:
    def of(node: Node) -> int:
        return node.allocatable.scalar.get(resource, 0)

    return of


def _requested_column(resource: str) -> DerivedColumn[int]:
    def of(ni: NodeInfo) -> int:
        return ni.requested.scalar.get(resource, 0)

    return DerivedColumn(of, np.int64, by_node=False)


def _taint_test(key: str, effect: str | None) -> Callable[[Node], bool]:
    def test(node: Node) -> bool:
        return any(t.key == key and (effect is None or t.effect == effect) for t in node.taints)

    return test
