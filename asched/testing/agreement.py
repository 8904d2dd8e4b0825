"""`check_fast_forms`: prove a plugin's fast forms equal its per-node answers.

A plugin's batch forms (`filter_batch`, `score_batch`, `normalize_batch`) and its memo
(NodeStaticPlugin.pod_key) are promises: the same verdicts, statuses and scores as its
`filter`/`score`/`normalize_score`, node for node. This check holds a plugin to them the
way asched holds its in-tree plugins (tests/unit/framework/test_columns_agree.py):
hypothesis builds small clusters and pods from the label, annotation and resource values
you name, schedules each pod twice through the real framework runtime - once as the
scheduler runs it (columns, batch forms, memos) and once node by node (`columnar=False`)
- and compares everything the scheduler acts on: every node's Filter status (code,
reasons, plugin), every Score plugin's raw, normalized and weighted scores, the totals,
and any Error. Between pods one node is updated (relabelled, re-annotated), so a memo
that misses a node change is caught too. A batch form that raises (a bug) is also a
failure: the runtime would fall back to the per-node form and hide the difference.

Call it from a plain (not async) test; it needs hypothesis (`pip install hypothesis`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from structlog.testing import capture_logs

from asched.api import Node, Pod
from asched.framework.registry import PluginSpec
from asched.framework.status import Status
from asched.testing.builders import make_node, make_pod
from asched.testing.results import CycleResult
from asched.testing.runner import Enabled, Runner

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

Plugins = Sequence[Enabled | PluginSpec | str]


@dataclass(frozen=True, slots=True)
class Universe:
    """The values generated objects draw from: key -> candidate values (a key may also be
    absent); `resources` are extended resources nodes offer (0-8) and pods request."""

    node_labels: Mapping[str, Sequence[str]]
    node_annotations: Mapping[str, Sequence[str]]
    pod_labels: Mapping[str, Sequence[str]]
    pod_annotations: Mapping[str, Sequence[str]]
    resources: Sequence[str]


@dataclass(frozen=True, slots=True)
class Case:
    nodes: list[Node]
    placed: list[Pod]
    pods: list[Pod]
    # Before pod `update_at` is scheduled, `updated` replaces the node of its name.
    update_at: int
    updated: Node


def check_fast_forms(
    plugins: Plugins,
    *,
    node_labels: Mapping[str, Sequence[str]] | None = None,
    node_annotations: Mapping[str, Sequence[str]] | None = None,
    pod_labels: Mapping[str, Sequence[str]] | None = None,
    pod_annotations: Mapping[str, Sequence[str]] | None = None,
    resources: Sequence[str] = (),
    max_examples: int = 100,
) -> None:
    """Raise AssertionError, with hypothesis' smallest failing cluster, when the profile
    of `plugins` (as `Runner` takes them: your plugin, perhaps with in-tree ones such as
    "NodeResourcesFit") decides any pod differently with its fast forms than node by node.

    Name the values your plugin reads, including malformed ones, e.g.
    `node_labels={"topology.kubernetes.io/region": ["r1", "r2"]}`,
    `pod_annotations={"example.com/regions": ["r1", "r1,r2", ""]}`,
    `resources=["nvidia.com/gpu"]`."""
    from hypothesis import HealthCheck, given, settings

    universe = Universe(
        node_labels or {},
        node_annotations or {},
        pod_labels or {},
        pod_annotations or {},
        tuple(resources),
    )

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(case=cases(universe))
    def agree(case: Case) -> None:
        with capture_logs() as logs:
            fast, slow = anyio.run(_schedule_all, plugins, case)
        for i, (got, want) in enumerate(zip(fast, slow, strict=True)):
            assert got == want, f"pod {i} ({case.pods[i].name}): fast {got} != per-node {want}"
        crashes = [e for e in logs if e.get("log_level") in ("error", "critical")]
        assert not crashes, f"a fast form raised: {crashes}"

    agree()


async def _schedule_all(
    plugins: Plugins, case: Case
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    out: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for columnar, results in ((True, out[0]), (False, out[1])):
        runner = Runner(plugins, nodes=case.nodes, pods=case.placed, columnar=columnar)
        for i, pod in enumerate(case.pods):
            if i == case.update_at:
                runner.update_node(case.updated)
            results.append(summary(await runner.schedule(pod)))
    return out


def _status(st: Status | None) -> tuple[object, ...] | None:
    # What a user sees; an Error's exception object differs between two runs.
    return None if st is None else (st.code, st.reasons, st.plugin)


def summary(r: CycleResult) -> dict[str, Any]:
    """Everything the scheduler acts on, comparable with ==."""
    return {
        "gate": _status(r.gate),
        "pre_filter": _status(r.pre_filter),
        "filter": {n: _status(st) for n, st in r.filter.items()},
        "skipped": (r.skipped_filters, r.skipped_scores),
        "error": _status(r.error),
        "scores": {name: (s.raw, s.normalized, s.weighted) for name, s in sorted(r.scores.items())},
        "totals": r.totals,
    }


def cases(u: Universe) -> SearchStrategy[Case]:
    from hypothesis import strategies as st

    @st.composite
    def build(draw: DrawFn) -> Case:
        count = draw(st.integers(1, 8))
        nodes = [_node(draw, u, f"n{i}") for i in range(count)]
        placed: list[Pod] = []
        for node in nodes:
            for j in range(draw(st.integers(0, 2))):
                placed.append(_pod(draw, u, f"{node.name}-{j}", node=node.name))
        pods = [_pod(draw, u, f"p{i}") for i in range(draw(st.integers(1, 4)))]
        moved = draw(st.sampled_from(nodes)).name
        return Case(nodes, placed, pods, draw(st.integers(0, len(pods))), _node(draw, u, moved))

    return build()


def _values(draw: DrawFn, pools: Mapping[str, Sequence[str]]) -> dict[str, str]:
    from hypothesis import strategies as st

    out: dict[str, str] = {}
    for key, values in pools.items():
        value = draw(st.sampled_from([None, *values]))
        if value is not None:
            out[key] = value
    return out


def _node(draw: DrawFn, u: Universe, name: str) -> Node:
    from hypothesis import strategies as st

    b = make_node(name).capacity(
        cpu=str(draw(st.integers(1, 16))),
        memory=f"{draw(st.integers(1, 64))}Gi",
        pods=str(draw(st.integers(1, 8))),
    )
    b.labels(_values(draw, u.node_labels))
    for key, value in _values(draw, u.node_annotations).items():
        b.annotation(key, value)
    for resource in u.resources:
        amount = draw(st.integers(-1, 8))
        if amount >= 0:
            b.resource(resource, str(amount))
    return b.obj()


def _pod(draw: DrawFn, u: Universe, name: str, *, node: str = "") -> Pod:
    from hypothesis import strategies as st

    b = make_pod(name).cpu(f"{draw(st.integers(0, 4000))}m")
    if node:
        b.node(node)
    b.labels(_values(draw, u.pod_labels))
    for key, value in _values(draw, u.pod_annotations).items():
        b.annotation(key, value)
    for resource in u.resources:
        amount = draw(st.integers(0, 3))
        if amount:
            b.request(resource, str(amount))
    return b.obj()
