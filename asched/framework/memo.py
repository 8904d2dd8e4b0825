"""Memoized node-static plugins: Filter verdicts and raw scores computed once per node
and pod key, then read from a column (NodeStaticPlugin in asched.framework.interfaces).

A memo presents the plugin to the runtime as a batch plugin (`filter_batch`,
`score_batch`), so the columnar Filter pass and the Scorer treat it like any batch form:
per pod key one DerivedColumn keyed on NodeColumns.node_serial, recomputed only for
rows whose Node object changed since the key was last seen (an update, a node added;
a rebuild keeps the serials of nodes that did not change). The answers equal the
plugin's own per-node calls by the plugin's promise, and because every stale row is
answered by that very call.

Guarantees: memory is bounded (at most `keys` pod keys per plugin, least recently used
first out); an Error verdict, an exception, an async method or an unhashable key is
never memoized - the runtime then runs the plugin node by node for that pod, which
reports the failure exactly as without a memo.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import orjson

from asched.api import Pod
from asched.framework.columns import (
    BatchVerdict,
    DerivedColumn,
    Int64s,
    NodeColumns,
    Unbatchable,
)
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import FilterPlugin, NodeStaticPlugin, PodKey, ScorePlugin
from asched.framework.nodeinfo import NodeInfo
from asched.framework.signatures import SignFragment, SignResult, unsignable
from asched.framework.status import Code, Status

# Pod keys kept per plugin. A profile sees a handful of distinct keys (the regions a pod
# may use, a GPU driver minimum); past this many the least recently used is recomputed.
MAX_KEYS = 64
# Distinct rejection statuses a memoized Filter may return (codes are int8).
MAX_STATUSES = 120


def _key(plugin: NodeStaticPlugin, pod: Pod) -> PodKey:
    try:
        key = plugin.pod_key(pod)
        hash(key)
    except Exception as exc:
        raise Unbatchable(str(exc)) from exc
    return key


class _Keys:
    """Pod key -> its column, least recently used first out."""

    def __init__(self, dtype: type, limit: int) -> None:
        self._dtype = dtype
        self._limit = limit
        self._columns: OrderedDict[Hashable, DerivedColumn[Any]] = OrderedDict()

    def column(self, key: Hashable) -> DerivedColumn[Any]:
        col = self._columns.get(key)
        if col is None:
            if len(self._columns) >= self._limit:
                self._columns.popitem(last=False)
            col = self._columns[key] = DerivedColumn(_unset, self._dtype, by_node=True)
        else:
            self._columns.move_to_end(key)
        return col

    def clear(self) -> None:
        self._columns.clear()

    def __len__(self) -> int:
        return len(self._columns)


def _unset(_ni: NodeInfo) -> Any:
    raise AssertionError("a memo column is always read with its compute")


class FilterMemo:
    """A node-static Filter plugin as a BatchFilterPlugin."""

    def __init__(self, name: str, plugin: Any, *, keys: int = MAX_KEYS) -> None:
        self.name = name
        self._plugin: NodeStaticPlugin = plugin
        self._filter: FilterPlugin = plugin
        self._keys = _Keys(np.int8, keys)
        # Distinct rejections, by value: code = index + 1 (0 passes).
        self._table: list[Status] = []
        self._code_of: dict[Status, int] = {}

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        col = self._keys.column(_key(self._plugin, pod))
        fn = self._filter.filter

        def verdict(ni: NodeInfo) -> int:
            try:
                st = fn(state, pod, ni)
            except Exception as exc:
                raise Unbatchable("the plugin raised; the per-node path reports it") from exc
            if st is None or st.code == Code.SUCCESS:
                return 0
            if not st.is_rejected():
                raise Unbatchable("an Error verdict is not memoized")
            return self._code(st)

        codes = col.values_at(cols, rows, verdict)
        if not codes.any():
            return None
        return BatchVerdict.coded(codes, tuple(self._table))

    def _code(self, st: Status) -> int:
        code = self._code_of.get(st)
        if code is None:
            if len(self._table) >= MAX_STATUSES:
                # Too many distinct reasons to code: start again rather than grow.
                self._table.clear()
                self._code_of.clear()
                self._keys.clear()
                raise Unbatchable("too many distinct rejections to memoize")
            self._table.append(st)
            code = self._code_of[st] = len(self._table)
        return code


class ScoreMemo:
    """A node-static Score plugin as a BatchScorePlugin (raw scores; NormalizeScore runs
    per pod as usual)."""

    def __init__(self, name: str, plugin: Any, *, keys: int = MAX_KEYS) -> None:
        self.name = name
        self._plugin: NodeStaticPlugin = plugin
        self._score: ScorePlugin = plugin
        self._keys = _Keys(np.int64, keys)

    def score_batch(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s) -> Int64s:
        col = self._keys.column(_key(self._plugin, pod))
        fn = self._score.score

        def raw(ni: NodeInfo) -> int:
            return int(fn(state, pod, ni))

        out: Int64s = col.values_at(cols, rows, raw)
        return out


class KeySigner:
    """Signs pods for a node-static plugin without `sign_pod`: its pod key is the
    fragment (framework signatures), so its profile keeps opportunistic batching on."""

    def __init__(self, name: str, plugin: NodeStaticPlugin) -> None:
        self._name = name
        self._plugin = plugin
        self._fragment = f"asched.dev/{name}.podKey"

    @property
    def name(self) -> str:
        return self._name

    def sign_pod(self, pod: Pod) -> SignResult:
        try:
            key = self._plugin.pod_key(pod)
            orjson.dumps(key)
        except Exception:
            return unsignable("the plugin's pod key cannot sign this pod", self._name)
        return (SignFragment(self._fragment, key),)


def memoizable(plugin: object, method: Callable[..., object]) -> bool:
    """A NodeStaticPlugin whose Filter or Score `method` is a plain function."""
    return isinstance(plugin, NodeStaticPlugin) and not inspect.iscoroutinefunction(method)
