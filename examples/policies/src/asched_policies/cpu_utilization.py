"""CPUUtilization: prefer nodes that are actually idle, as a metrics agent measured them.

Requests say what pods reserved; a node can still be busy (or idle) in fact. Some agent
outside the scheduler writes each node's measured CPU utilisation, a float in [0, 1],
into a node annotation (`args.annotation`, `policies.asched.dev/cpu-utilization` by
default). Score is round(100 * (1 - utilisation)): an idle node 100, a saturated one 0.

A node without the annotation scores `args.defaultScore` (50: no evidence either way).
A malformed value (not a number, outside [0, 1], NaN) is treated as missing and logged
once per node version (its resourceVersion), so a broken agent is visible in the logs
without one line per pod per node. The scores are already in [0, 100]: no normalization.

Fast form: node-static. The score reads only the Node (an annotation) and nothing of the
pod, so `pod_key` is constant and asched memoizes it: `score` runs once per node and
again only when that node is updated, and every pod reads the scores from a column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import structlog
from asched.api import Node, Pod
from asched.framework import (
    MAX_NODE_SCORE,
    CycleState,
    NodeInfo,
    NodeStaticPlugin,
    PluginSpec,
    PodKey,
    ScorePlugin,
)
from asched.framework.handle import Handle
from asched.plugins.helpers import check_fields

from asched_policies.args import read_bounded_int, read_key
from asched_policies.policy_annotations import CPU_UTILIZATION, Malformed, parse_fraction

NAME = "CPUUtilization"
DEFAULT_SCORE = 50
# Forget which node versions were reported once this many are remembered (nodes come and
# go; the memory must stay bounded). Worst case a malformed value is logged again.
_REPORTED_LIMIT = 10_000

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class CPUUtilizationArgs:
    annotation: str = CPU_UTILIZATION
    default_score: int = DEFAULT_SCORE

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("annotation", "defaultScore"), path)
        return cls(
            read_key(raw, "annotation", path, CPU_UTILIZATION),
            read_bounded_int(raw, "defaultScore", path, DEFAULT_SCORE, low=0, high=MAX_NODE_SCORE),
        )


Args = CPUUtilizationArgs


class CPUUtilization(ScorePlugin, NodeStaticPlugin):
    def __init__(self, args: CPUUtilizationArgs | None, handle: Handle) -> None:
        self._args = args or CPUUtilizationArgs()
        self._handle = handle
        # node name -> the resourceVersion whose malformed value was already logged.
        self._reported: dict[str, str] = {}

    @property
    def name(self) -> str:
        return NAME

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None:
            raise LookupError(f"node {node_info.name!r} has no Node object")
        utilization = parse_fraction(node.annotations.get(self._args.annotation))
        if utilization is None:
            return self._args.default_score
        if isinstance(utilization, Malformed):
            self._report_malformed(node, utilization.text)
            return self._args.default_score
        return round(MAX_NODE_SCORE * (1.0 - utilization))

    def pod_key(self, pod: Pod) -> PodKey:
        # The score depends on the node alone.
        return ""

    def _report_malformed(self, node: Node, text: str) -> None:
        if self._reported.get(node.name) == node.resource_version:
            return
        if len(self._reported) >= _REPORTED_LIMIT:
            self._reported.clear()
        self._reported[node.name] = node.resource_version
        log.warning(
            "cpu_utilization_malformed",
            node=node.name,
            resource_version=node.resource_version,
            annotation=self._args.annotation,
            value=text,
            using_score=self._args.default_score,
        )


SPEC = PluginSpec(NAME, CPUUtilization, CPUUtilizationArgs)
