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

import anyio.lowlevel

from asched.api import Pod
from asched.explain.model import Explanation, NodeScores, NodeVerdict, PluginScore, Verdict
from asched.framework.cycle_state import CycleState
from asched.framework.filtering import FilterCheck, chunk_size
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Code
from asched.framework.types import NodeToStatus
from asched.scheduler.algorithm import num_feasible_nodes_to_find
from asched.scheduler.diagnosis import NO_NODES_AVAILABLE, Diagnosis, FitError


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
    chunk = chunk_size(len(nodes))
    for i, ni in enumerate(nodes):
        verdict, checks = await filter_node(fwk, state, pod, ni)
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
    fwk: Framework, state: CycleState, pod: Pod, ni: NodeInfo
) -> tuple[Verdict, list[Verdict]]:
    """The node's verdict (first rejection) and every Filter plugin's own answer.

    Each plugin's answer is its first rejection over the runtime's passes (with the
    node's nominated pods, then without), else its answer in the last pass.
    """
    passes: list[list[FilterCheck]] = []
    st = await fwk.run_filter_plugins_with_nominated_pods(state, pod, ni, checks=passes)
    if not passes:
        # A PreFilter extension rejected adding a nominated pod: no plugin ran.
        return Verdict.of(st.plugin if st else "", st), []
    checks = [
        next(
            (Verdict.of(p[i][0], p[i][1]) for p in passes if p[i][1] is not None),
            Verdict.of(*passes[-1][i]),
        )
        for i in range(len(passes[-1]))
    ]
    return (Verdict.of(st.plugin, st) if st is not None else Verdict("")), checks


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
    table, st = await fwk.run_score_plugins(state, pod, feasible)
    if st is not None:
        out.score_error = Verdict.of(st.plugin, st)
        return
    out.score_weights = {ps.plugin: ps.weight for ps in table.plugins}
    rows = [
        NodeScores(name, total=total) for name, total in zip(table.nodes, table.totals, strict=True)
    ]
    for ps in table.plugins:
        for i, row in enumerate(rows):
            row.plugins[ps.plugin] = PluginScore(ps.raw[i], ps.normalized[i], ps.weighted[i])
    order = {name: i for i, name in enumerate(table.nodes)}
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
