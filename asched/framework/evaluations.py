"""How many times kube-scheduler would have run each plugin: scheduler_plugin_evaluation_total."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from asched.framework.status import Status


def filter_evaluations(
    names: Sequence[str], feasible: int, rejected: Iterable[tuple[Status, int]]
) -> list[tuple[str, int]]:
    """How often kube-scheduler would have called each Filter plugin in a pass.

    RunFilterPlugins calls the plugins in order and stops at a node's first rejection,
    so plugin i ran for every feasible node and for every node rejected at plugin i or
    later (or with an Error there). Counted from the pass's outcome, not per call, so the
    batch path and the per-node path count alike and the per-node loop pays nothing.
    Nodes with nominated pods, which take two passes, are counted once.
    """
    at = {name: i for i, name in enumerate(names)}
    stopped_at = [0] * (len(names) + 1)
    for st, nodes in rejected:
        # A node rejected elsewhere (a PreFilter extension, with nominated pods) ran none.
        stopped_at[at.get(st.plugin, len(names))] += nodes
    counts: list[tuple[str, int]] = []
    later = 0  # nodes rejected at this plugin or after it
    for i in range(len(names) - 1, -1, -1):
        later += stopped_at[i]
        counts.append((names[i], feasible + later))
    counts.reverse()
    return [(name, n) for name, n in counts if n]
