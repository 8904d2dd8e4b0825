"""The plugin SDK's testing kit: what a plugin package needs to test against asched alone.

- builders: `make_pod("p").cpu("500m").obj()`, `make_node("n1").label(...).obj()`,
  `make_pod_group("g").min_member(3).obj()`, decoded by the informers' own decoders;
- `FakeHandle` and `node_info`, to build a plugin and call its methods directly;
- `Runner`, to run one plugin or a small profile (weights, args) through the real
  framework runtime and read per-node filter statuses, per-plugin scores and the node
  that would be selected (`CycleResult`);
- `check_fast_forms`, to prove a plugin's batch forms and memo give exactly its
  per-node answers (hypothesis over generated clusters).

Shipped in the asched wheel and typed; asched's own suite uses the same kit.
"""

from asched.testing.agreement import check_fast_forms
from asched.testing.builders import (
    NodeBuilder,
    PodBuilder,
    PodGroupBuilder,
    make_node,
    make_pod,
    make_pod_group,
)
from asched.testing.fakes import (
    FakeClient,
    FakeEvents,
    FakeHandle,
    FakeSnapshot,
    filled_store,
    node_info,
)
from asched.testing.results import CycleResult, ScoresByNode
from asched.testing.runner import Enabled, Runner, enable

__all__ = [
    "CycleResult",
    "Enabled",
    "FakeClient",
    "FakeEvents",
    "FakeHandle",
    "FakeSnapshot",
    "NodeBuilder",
    "PodBuilder",
    "PodGroupBuilder",
    "Runner",
    "ScoresByNode",
    "check_fast_forms",
    "enable",
    "filled_store",
    "make_node",
    "make_pod",
    "make_pod_group",
    "node_info",
]
