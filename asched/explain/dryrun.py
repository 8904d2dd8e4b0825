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

The steps themselves are the scheduler's own (Algorithm.evaluate with `full` and
`checks`); this module turns what they found into an Explanation.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod
from asched.explain.model import Explanation, NodeScores, NodeVerdict, PluginScore, Verdict
from asched.framework.cycle_state import CycleState
from asched.framework.filtering import FilterCheck
from asched.framework.nodeinfo import NodeInfo
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.scheduler.algorithm import Algorithm, Evaluation, num_feasible_nodes_to_find
from asched.scheduler.diagnosis import NO_NODES_AVAILABLE, FitError


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
    ev = await Algorithm(percentage_of_nodes_to_score).evaluate(
        fwk, state, pod, nodes, full=True, checks=True
    )
    out.skipped_filters = tuple(
        p.name for p in fwk.filter_plugins if p.name in state.skip_filter_plugins
    )
    st = ev.pre_filter
    if st is not None:
        # The pod is rejected as a whole; kube-scheduler gives every node this status.
        out.pre_filter = Verdict.of(st.plugin, st)
        out.nodes = [NodeVerdict(ni.name, out.pre_filter) for ni in nodes]
        if not st.is_rejected():
            out.notes.append("PreFilter returned Error: asched would retry the pod later")
        else:
            out.fit_error = FitError(pod.key, len(nodes), ev.diagnosis).message()
        return out

    out.narrowed_by = ev.narrowed_by
    statuses = ev.diagnosis.node_to_status
    feasible = {ni.name for ni in ev.feasible}
    for ni in nodes:
        passes = ev.checks.get(ni.name, [])
        verdict = Verdict("") if ni.name in feasible else _verdict(ev, statuses.get(ni.name))
        out.nodes.append(NodeVerdict(ni.name, verdict, _plugin_checks(passes)))
    if ev.filter_error is not None:
        out.notes.append("a Filter plugin returned Error: asched would retry the pod later")
    if not ev.feasible:
        out.fit_error = (
            FitError(pod.key, len(nodes), ev.diagnosis).message() if nodes else NO_NODES_AVAILABLE
        )
        return out
    _scores(fwk, ev, out)
    _notes(fwk, out, len(nodes), percentage_of_nodes_to_score)
    nominated = pod.nominated_node_name
    if nominated and nominated in feasible:
        # kube-scheduler evaluates the nominated node first and takes it if it fits.
        out.selected = nominated
        out.notes.append(
            f"the pod is nominated to {nominated} (preemption made room there) and it fits: "
            "asched takes it without looking further"
        )
    return out


def _verdict(ev: Evaluation, st: Status | None) -> Verdict:
    """A node's rejection; one PreFilter left out is reported as the narrowing plugins'."""
    return Verdict.of(" ".join(ev.narrowed_by), st)


def _plugin_checks(passes: list[list[FilterCheck]]) -> list[Verdict]:
    """Every Filter plugin's own answer on a node: its first rejection over the runtime's
    passes (with the node's nominated pods, then without), else its answer in the last
    pass. None when a PreFilter extension rejected adding a nominated pod (no plugin ran)."""
    if not passes:
        return []
    return [
        next(
            (Verdict.of(p[i][0], p[i][1]) for p in passes if p[i][1] is not None),
            Verdict.of(*passes[-1][i]),
        )
        for i in range(len(passes[-1]))
    ]


def _scores(fwk: Framework, ev: Evaluation, out: Explanation) -> None:
    """Each Score plugin's raw, normalized and weighted score per node, best first."""
    out.skipped_scores = tuple(
        p.name for p in fwk.score_plugins if p.name in ev.state.skip_score_plugins
    )
    if ev.score_error is not None:
        out.score_error = Verdict.of(ev.score_error.plugin, ev.score_error)
        return
    table = ev.table
    assert table is not None, "a full evaluation scores every feasible node"
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
