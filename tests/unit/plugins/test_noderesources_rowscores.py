"""NodeResourcesFit's and BalancedAllocation's columnar scores, kept across cycles per row
(rowscores.py), equal the per-node scores while the cluster changes under them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from asched.api import Node, Pod
from asched.framework.cycle_state import CycleState
from asched.framework.handle import Handle
from asched.plugins.noderesources.balanced_allocation import BalancedAllocation
from asched.plugins.noderesources.fit import Fit
from asched.testing.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle
from tests.unit.plugins.fakes_pods import Churn


def _node(rng: random.Random, name: str) -> Node:
    cpu, memory = rng.choice([("4", "32Gi"), ("8", "16Gi"), ("2", "64Gi")])
    return make_node(name).capacity(cpu=cpu, memory=memory, pods="110").obj()


def _pod(rng: random.Random, name: str, node_name: str) -> Pod:
    b = make_pod(name).cpu(rng.choice(["100m", "500m", "1"])).memory(rng.choice(["0", "1Gi"]))
    return b.node(node_name).obj()


_INCOMING = [
    make_pod("small").cpu("100m").memory("500Mi").obj(),
    make_pod("large").cpu("2").memory("4Gi").obj(),
    make_pod("requestless").obj(),
]


@pytest.mark.parametrize("plugin_type", [Fit, BalancedAllocation], ids=["fit", "balanced"])
def test_kept_scores_equal_per_node_scores(
    plugin_type: type[Fit] | type[BalancedAllocation],
) -> None:
    rng = random.Random(7)
    churn = Churn(rng, _node, _pod, nodes=10)
    handle: Handle = FakeHandle()
    plugin = plugin_type(None, handle)
    for _ in range(200):
        churn.step()
        nodes = churn.columnar().node_infos()
        cols, rows = nodes.columns, nodes.rows
        # All rows, or a sample starting anywhere, as the round robin hands them.
        start = rng.randrange(len(rows))
        picked = np.roll(rows, -start)[: rng.randint(1, len(rows))]
        for pod in _INCOMING:
            state = CycleState()
            plugin.pre_score(state, pod, nodes)
            got = plugin.score_batch(state, pod, cols, picked).tolist()
            want = [plugin.score(state, pod, cols.infos[r]) for r in picked.tolist()]
            assert got == want
