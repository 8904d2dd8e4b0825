"""asched's batching Algorithm against a literal model of kube-scheduler's, on random clusters.

The model transcribes, sequentially and without asched's Algorithm or SortedScoredNodes,
what schedule_one.go and batch.go do: findNodesThatFitPod (PreFilter, GetNodeHint, the
nominated/hinted node first, otherwise the round robin from nextStartNodeIndex until
numFeasibleNodesToFind feasible nodes), schedulePod (one feasible node: taken; else
prioritizeNodes, NewSortedScoredNodes, Pop) and StoreScheduleResults, with
container/heap as tests/unit/framework/test_sorted_nodes.py's GoHeap. It runs the same
plugins through the same Framework runners, so what is compared is the algorithm around
them: which nodes are evaluated, the order the ranking is kept in, when a hint is given,
taken and rescored, and where the round robin goes. With more than 100 nodes the adaptive
percentage samples, so a wrong window or a wrong kept ranking changes the node chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import anyio
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.nodeinfo import NodeInfo
from asched.framework.opportunistic import MAX_BATCH_AGE
from asched.framework.runtime import Framework
from asched.scheduler.algorithm import num_feasible_nodes_to_find
from asched.testing import make_pod
from tests.unit.framework.test_sorted_nodes import GoHeap
from tests.unit.scheduler.test_batching import Cluster, node


@dataclass
class Entry:
    """fwk.NodePluginScores: a node and its raw scores by plugin."""

    name: str
    raw: dict[str, int]


@dataclass
class GoBatch:
    signature: bytes
    entries: dict[int, Entry]
    heap: GoHeap
    created: float


@dataclass
class GoModel:
    fwk: Framework
    cluster: Cluster
    next_start: int = 0
    state: GoBatch | None = None
    last: tuple[int, str, bool] = (0, "", False)
    hints_used: int = 0
    ids: int = field(default=0)

    def _nodes(self) -> list[NodeInfo]:
        return list(self.cluster.snapshot.node_infos())

    async def _normalized(self, state: CycleState, pod: Pod, entries: list[Entry]) -> list[int]:
        plugins = [name for name, _, _ in self.fwk.score_fns(state)]
        raws = [
            (p, np.asarray([e.raw.get(p, 0) for e in entries], dtype=np.int64)) for p in plugins
        ]
        table, st_ = self.fwk.normalize_scores(state, pod, raws, lambda: [e.name for e in entries])
        assert st_ is None
        return [
            int(t) for t in (table.totals if table.totals_array is None else table.totals_array)
        ]

    async def _raw(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Entry:
        scores, st_ = await self.fwk.run_raw_score_plugins(state, pod, ni)
        assert st_ is None
        return Entry(ni.name, dict(scores))

    async def hint(self, pod: Pod, sig: bytes | None, state: CycleState, cycle: int) -> str:
        """GetNodeHint."""
        b = self.state
        if b is None or not b.heap.h:
            return ""
        last_cycle, chosen, ok = self.last
        if cycle != last_cycle + 1 and cycle != last_cycle:
            return ""
        if not ok or pod.nominated_node_name or sig is None or sig != b.signature:
            return ""
        if self.cluster.services.clock.now() > b.created + MAX_BATCH_AGE:
            return ""
        ni = self.cluster.snapshot.get(chosen)
        if ni is None:
            return ""
        st_ = await self.fwk.run_filter_plugins(state, pod, ni)
        if st_ is None or st_.is_success():
            # rescoreHintedNode
            kept = [b.entries[i] for i, _ in b.heap.h]
            infos = [self.cluster.snapshot.get(e.name) for e in kept]
            assert all(i is not None for i in infos)
            rescore = state.clone()
            assert await self.fwk.run_pre_score(rescore, pod, [*infos, ni]) is None
            fresh = await self._raw(rescore, pod, ni)
            self.ids += 1
            b.entries[self.ids] = fresh
            everyone = [*kept, fresh]
            totals = await self._normalized(rescore, pod, everyone)
            b.heap = GoHeap([i for i, _ in b.heap.h] + [self.ids], totals)
        return b.entries[b.heap.pop()].name

    def store(
        self, sig: bytes | None, hint: str, chosen: str, ranking: GoBatch | None, cycle: int
    ) -> None:
        self.last = (cycle, chosen, True)
        if hint == chosen:
            self.hints_used += 1
            return
        if sig is not None and ranking is not None and ranking.heap.h:
            self.state = ranking
        else:
            self.state = None

    async def schedule(self, pod: Pod, cycle: int) -> str:
        nodes = self._nodes()
        state = CycleState()
        sig = self.fwk.sign_pod(pod)
        _, st_, _ = await self.fwk.run_pre_filter(state, pod, nodes)
        assert st_ is None or st_.is_success()
        hint = await self.hint(pod, sig, state, cycle)
        first = pod.nominated_node_name or hint
        feasible: list[NodeInfo] = []
        if first:
            ni = self.cluster.snapshot.get(first)
            if (
                ni is not None
                and (await self.fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)) is None
            ):
                feasible = [ni]
        if not feasible:
            want = num_feasible_nodes_to_find(0, len(nodes))
            processed = 0
            for i in range(len(nodes)):
                ni = nodes[(self.next_start + i) % len(nodes)]
                processed += 1
                if (await self.fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)) is None:
                    feasible.append(ni)
                    if len(feasible) == want:
                        break
            self.next_start = (self.next_start + processed) % len(nodes)
        assert feasible
        if len(feasible) == 1:
            self.store(sig, hint, feasible[0].name, None, cycle)
            return feasible[0].name
        assert await self.fwk.run_pre_score(state, pod, feasible) is None
        entries = [await self._raw(state, pod, ni) for ni in feasible]
        totals = await self._normalized(state, pod, entries)
        ids = list(range(self.ids + 1, self.ids + 1 + len(entries)))
        self.ids = ids[-1]
        heap = GoHeap(ids, totals)
        chosen = dict(zip(ids, entries, strict=True))[heap.pop()].name
        batch = GoBatch(sig or b"", dict(zip(ids, entries, strict=True)), heap, 0.0)
        batch.created = self.cluster.services.clock.now()
        self.store(sig, hint, chosen, batch, cycle)
        return chosen


TEMPLATES = [("500m", "1Gi"), ("500m", "1Gi"), ("1", "2Gi"), ("250m", "512Mi")]


@settings(max_examples=12, deadline=None)
@given(
    cpus=st.lists(st.sampled_from([4, 4, 4, 8, 16]), min_size=101, max_size=130),
    templates=st.lists(st.integers(0, len(TEMPLATES) - 1), min_size=4, max_size=14),
    gaps=st.lists(st.booleans(), min_size=14, max_size=14),
)
def test_asched_batches_as_the_literal_model_does(
    cpus: list[int], templates: list[int], gaps: list[bool]
) -> None:
    async def run() -> None:
        nodes = [node(f"n{i:03}", cpu=c) for i, c in enumerate(cpus)]
        ours, theirs = Cluster(nodes), Cluster(nodes)
        model = GoModel(theirs.fwk, theirs)
        for i, t in enumerate(templates):
            cpu, mem = TEMPLATES[t]
            pod = make_pod(f"p{i}").cpu(cpu).memory(mem).obj()
            if gaps[i]:
                # Time passes, sometimes past the ranking's 500 ms.
                for c in (ours, theirs):
                    c.services.clock.advance(0.3)
            got = await ours.place(pod)
            theirs.cycle += 1
            theirs.cache.update_snapshot(theirs.snapshot)
            want = await model.schedule(pod, theirs.cycle)
            theirs.cache.assume_pod(replace(pod, node_name=want))
            assert got == want, (i, got, want)
            assert ours.algo.next_start_node_index == model.next_start, i
        assert ours.counts.attempts["hint_used"] == model.hints_used

    anyio.run(run)
