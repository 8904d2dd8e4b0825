"""One scheduling cycle of one pod, evaluated in full and bound nowhere.

The steps and their order are kube-scheduler's (schedule_one.go, runtime/framework.go),
with two differences that make the answer complete rather than fast:
- every node is filtered (no percentageOfNodesToScore sampling, no early stop), and on
  each node every Filter plugin runs, so a node shows all its problems; the node's verdict
  is still the first rejection in profile order, as RunFilterPlugins decides;
- scores are computed even when only one node is feasible (asched then skips scoring).
What it never runs: PostFilter (preemption would delete victims), Reserve, Permit and the
binding points. The Framework's services must be read-only (see services.py).

Nominated pods are accounted as in RunFilterPluginsWithNominatedPods: on a node where
pods of equal or higher priority are nominated, a plugin is asked once with them added
and once without, and the node is rejected by the first plugin failing the first pass,
else by the first failing the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio.lowlevel

from asched.api import Pod
from asched.explain.model import Explanation, NodeScores, NodeVerdict, PluginScore, Verdict
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import FilterFn, Framework
from asched.framework.status import Code, Status, error
from asched.framework.types import NodeScore, NodeToStatus
from asched.scheduler.algorithm import chunk_size, num_feasible_nodes_to_find
from asched.scheduler.diagnosis import NO_NODES_AVAILABLE, Diagnosis, FitError

FilterEntry = tuple[str, FilterFn, bool]


async def dry_run(
    fwk: Framework,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    *,
    percentage_of_nodes_to_score: int = 0,
) -> Explanation:
    """Explain where *pod* would go among *nodes* (the snapshot's node infos)."""
    out = Explanation(pod=pod.key, profile=fwk.profile_name)
    gated = fwk.run_pre_enqueue(pod)
    if gated is not None:
        out.gate = Verdict.of(gated[0], gated[1])
    state = CycleState()
    pre_res, st, rejectors = await fwk.run_pre_filter(state, pod, nodes)
    out.skipped_filters = tuple(
        p.name for p in fwk.filter_plugins if p.name in state.skip_filter_plugins
    )
    if st is not None and not st.is_success():
        # The pod is rejected as a whole; kube-scheduler gives every node this status.
        out.pre_filter = Verdict.of(st.plugin, st)
        out.nodes = [NodeVerdict(ni.name, out.pre_filter) for ni in nodes]
        if not st.is_rejected():
            out.notes.append("PreFilter returned Error: asched would retry the pod later")
        else:
            diagnosis = Diagnosis(pre_filter_msg=st.message())
            out.fit_error = FitError(pod.key, len(nodes), diagnosis).message()
        return out

    allowed = pre_res.node_names if pre_res is not None else None
    if allowed is not None:
        out.narrowed_by = tuple(sorted(rejectors))
    outside = Verdict(
        " ".join(out.narrowed_by),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (f"node(s) didn't satisfy plugin(s) [{' '.join(out.narrowed_by)}]",),
    )
    fns = fwk.filter_fns(state)
    chunk = chunk_size(len(nodes))
    for i, ni in enumerate(nodes):
        verdict, checks = await filter_node(fwk, fns, state, pod, ni)
        if allowed is not None and ni.name not in allowed:
            verdict = outside
        out.nodes.append(NodeVerdict(ni.name, verdict, checks))
        if (i + 1) % chunk == 0:
            await anyio.lowlevel.checkpoint()

    if any(v.verdict.code == Code.ERROR for v in out.nodes):
        out.notes.append("a Filter plugin returned Error: asched would retry the pod later")
    feasible = [ni for ni, v in zip(nodes, out.nodes, strict=True) if v.feasible]
    if not feasible:
        out.fit_error = _fit_error(pod, out.nodes) if nodes else NO_NODES_AVAILABLE
        return out
    await score(fwk, state, pod, feasible, out)
    _notes(fwk, out, len(nodes), percentage_of_nodes_to_score)
    nominated = pod.nominated_node_name
    if nominated and any(ni.name == nominated for ni in feasible):
        # kube-scheduler evaluates the nominated node first and takes it if it fits.
        out.selected = nominated
        out.notes.append(
            f"the pod is nominated to {nominated} (preemption made room there) and it fits: "
            "asched takes it without looking further"
        )
    return out


async def filter_node(
    fwk: Framework, fns: Sequence[FilterEntry], state: CycleState, pod: Pod, ni: NodeInfo
) -> tuple[Verdict, list[Verdict]]:
    """The node's verdict (first rejection) and every Filter plugin's own answer."""
    passes: list[tuple[CycleState, NodeInfo]] = []
    nominated = [
        p
        for p in fwk.nominated_pods_for_node(ni.name)
        if p.uid != pod.uid and p.priority >= pod.priority
    ]
    if nominated:
        state2, ni2 = state.clone(), ni.clone()
        for p in nominated:
            ni2.add_pod(p)
            st = fwk.run_pre_filter_extension_add_pod(state2, pod, p, ni2)
            if st is not None and not st.is_success():
                return Verdict.of(st.plugin, st), []
        passes.append((state2, ni2))
    passes.append((state, ni))

    results: list[list[Verdict]] = []
    for pass_state, pass_ni in passes:
        results.append([await _run_filter(e, pass_state, pod, pass_ni) for e in fns])
    checks = [next((r[i] for r in results if not r[i].ok), results[-1][i]) for i in range(len(fns))]
    for r in results:
        first = next((v for v in r if not v.ok), None)
        if first is not None:
            return first, checks
    return Verdict(""), checks


async def _run_filter(entry: FilterEntry, state: CycleState, pod: Pod, ni: NodeInfo) -> Verdict:
    name, fn, is_async = entry
    try:
        res: Any = fn(state, pod, ni)
        st: Status | None = await res if is_async else res
    except Exception as exc:
        # As the runtime does: a plugin's exception is an Error status with its name.
        st = error(exc, name)
    if st is not None and st.code == Code.SUCCESS:
        st = None
    return Verdict.of(name, st)


async def score(
    fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo], out: Explanation
) -> None:
    """PreScore, then each Score plugin's raw, normalized and weighted score per node."""
    st = await fwk.run_pre_score(state, pod, feasible)
    out.skipped_scores = tuple(
        p.name for p in fwk.score_plugins if p.name in state.skip_score_plugins
    )
    if st is not None and not st.is_success():
        out.score_error = Verdict.of(st.plugin, st)
        return
    fns = fwk.score_fns(state)
    out.score_weights = {name: fwk.score_weights.get(name, 1) for name, _, _ in fns}
    raw: dict[str, list[NodeScore]] = {name: [] for name, _, _ in fns}
    for name, fn, is_async in fns:
        for ni in feasible:
            try:
                res: Any = fn(state, pod, ni)
                value = await res if is_async else res
            except Exception as exc:
                out.score_error = Verdict.of(name, error(exc, name))
                return
            raw[name].append(NodeScore(ni.name, int(value)))
        await anyio.lowlevel.checkpoint()
    weighted = {name: [NodeScore(s.name, s.score) for s in scores] for name, scores in raw.items()}
    st = fwk.normalize_and_weigh(state, pod, weighted)
    if st is not None:
        out.score_error = Verdict.of(st.plugin, st)
        return
    rows = [NodeScores(ni.name) for ni in feasible]
    for name, scores in weighted.items():
        weight = out.score_weights[name]
        for row, r, w in zip(rows, raw[name], scores, strict=True):
            # normalize_and_weigh multiplied by the weight (>= 1) last: divide it back out.
            row.plugins[name] = PluginScore(r.score, w.score // weight, w.score)
            row.total += w.score
    if not fns:
        for row in rows:
            row.total = 1  # kube-scheduler: with no Score plugins every node scores 1
    order = {ni.name: i for i, ni in enumerate(feasible)}
    rows.sort(key=lambda r: (-r.total, order[r.node]))
    out.scores = rows
    top = rows[0].total
    out.best = tuple(r.node for r in rows if r.total == top)
    out.selected = out.best[0] if len(out.best) == 1 else ""


def _fit_error(pod: Pod, verdicts: Sequence[NodeVerdict]) -> str:
    statuses = NodeToStatus()
    for v in verdicts:
        statuses.set(v.node, v.verdict.status())
    return FitError(pod.key, len(verdicts), Diagnosis(node_to_status=statuses)).message()


def _notes(fwk: Framework, out: Explanation, num_nodes: int, percentage: int) -> None:
    pct = fwk.profile.percentage_of_nodes_to_score
    to_find = num_feasible_nodes_to_find(percentage if pct is None else pct, num_nodes)
    if len(out.feasible) > to_find:
        out.notes.append(
            f"asched stops filtering once {to_find} of the {num_nodes} nodes fit "
            "(percentageOfNodesToScore), starting where its previous cycle stopped, so it "
            "chooses among fewer nodes than shown here"
        )
    if len(out.feasible) == 1:
        out.notes.append("only one node fits: asched takes it without scoring")
    if len(out.best) > 1:
        out.notes.append(f"{len(out.best)} nodes share the best score: asched picks one at random")
