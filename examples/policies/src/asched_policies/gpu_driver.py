"""GPUDriver: GPU pods only go to nodes whose GPU driver is new enough - the seed's 🚀 wish.

A node advertises its driver's major version in a label (`args.labelKey`, by default
`nvidia.com/cuda.driver.major`, as NVIDIA's GPU feature discovery writes it). A pod's
minimum is its annotation `policies.asched.dev/min-gpu-driver`, else `args.minMajor`.

- Pods that request none of `args.resourceName` (nvidia.com/gpu) pass everywhere, and so
  do GPU pods whose minimum is 0: PreFilter answers Skip for both.
- Filter accepts a node whose label is an integer >= the minimum. A node without the
  label, or with a value that is not an integer, cannot prove its driver and is
  rejected. Rejections are UnschedulableAndUnresolvable: preemption cannot upgrade a
  driver.
- A malformed pod annotation (not a non-negative integer) rejects the pod in PreFilter
  with a reason naming the annotation, so the user sees what to fix; fixing it is a pod
  update, which requeues the pod.
- Fast form: `filter_batch` reads the driver label's column; each distinct label value
  is parsed once (`LabelColumn.map_values`), so a verdict over every node is one array
  comparison. `pod_key` (the pod's minimum) signs pods for opportunistic batching.
- Events: node added or relabelled (requeue when the node now satisfies the pod and did
  not before); pod updated (requeue when its minimum changed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
from asched.api import Node, Pod
from asched.framework import (
    ActionType,
    BatchFilterPlugin,
    BatchVerdict,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    Int64s,
    NodeColumns,
    NodeInfo,
    NodeStaticPlugin,
    PluginSpec,
    PodKey,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    StateKey,
    Status,
)
from asched.framework.handle import Handle
from asched.framework.status import error, skip
from asched.plugins.helpers import as_node, as_pod, check_fields

from asched_policies.args import read_bounded_int, read_key, read_resource
from asched_policies.policy_annotations import MIN_GPU_DRIVER, Malformed, parse_non_negative_int

NAME = "GPUDriver"
DEFAULT_LABEL_KEY = "nvidia.com/cuda.driver.major"
DEFAULT_RESOURCE = "nvidia.com/gpu"
ERR_REASON = "node(s) didn't have the GPU driver version the pod requires"

_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,), NAME)
_SKIP = skip(NAME)
_MIN_KEY: StateKey[int] = StateKey("PreFilter" + NAME)


@dataclass(frozen=True, slots=True)
class GPUDriverArgs:
    label_key: str = DEFAULT_LABEL_KEY
    # The minimum for GPU pods without the annotation; 0 = any driver, or none.
    min_major: int = 0
    resource_name: str = DEFAULT_RESOURCE

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("labelKey", "minMajor", "resourceName"), path)
        return cls(
            read_key(raw, "labelKey", path, DEFAULT_LABEL_KEY),
            read_bounded_int(raw, "minMajor", path, 0, low=0),
            read_resource(raw, "resourceName", path, DEFAULT_RESOURCE, extended_only=True),
        )


Args = GPUDriverArgs


def major_or_none(value: str) -> int:
    """A driver label's value as a major version; -1 when it is not one (fails any
    minimum >= 1, as a missing label does)."""
    parsed = parse_non_negative_int(value)
    return parsed if isinstance(parsed, int) else -1


def driver_major(node: Node, label_key: str) -> int | None:
    """The node's driver major version; None when the label is missing or not an integer."""
    parsed = parse_non_negative_int(node.labels.get(label_key))
    return parsed if isinstance(parsed, int) else None


class GPUDriver(
    PreFilterPlugin, FilterPlugin, BatchFilterPlugin, NodeStaticPlugin, EnqueueExtensions
):
    def __init__(self, args: GPUDriverArgs | None, handle: Handle) -> None:
        self._args = args or GPUDriverArgs()
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def required_major(self, pod: Pod) -> int | Malformed:
        """The pod's minimum driver major version; 0 when it needs none."""
        if pod.requests.scalar.get(self._args.resource_name, 0) <= 0:
            return 0
        own = parse_non_negative_int(pod.annotations.get(MIN_GPU_DRIVER))
        return self._args.min_major if own is None else own

    def _satisfies(self, node: Node, minimum: int) -> bool:
        if minimum == 0:
            return True
        major = driver_major(node, self._args.label_key)
        return major is not None and major >= minimum

    # --- PreFilter / Filter ------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        minimum = self.required_major(pod)
        if isinstance(minimum, Malformed):
            return None, self._bad_annotation(minimum)
        if minimum == 0:
            return None, _SKIP
        state.write(_MIN_KEY, minimum)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        minimum = state.get(_MIN_KEY)
        if minimum is None:
            # PreFilter disabled in this profile: work it out here.
            required = self.required_major(pod)
            if isinstance(required, Malformed):
                return self._bad_annotation(required)
            minimum = required
        return None if self._satisfies(node, minimum) else _REJECT

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        minimum = state.get(_MIN_KEY)
        if minimum is None:
            required = self.required_major(pod)
            if isinstance(required, Malformed):
                none_pass = np.zeros(len(rows), dtype=np.bool_)
                return BatchVerdict.constant(none_pass, self._bad_annotation(required))
            minimum = required
        if minimum == 0:
            return None
        majors = cols.label(self._args.label_key).map_values(major_or_none, rows, missing=-1)
        passed = majors >= minimum
        return None if passed.all() else BatchVerdict.constant(passed, _REJECT)

    def pod_key(self, pod: Pod) -> PodKey:
        required = self.required_major(pod)
        return ("malformed", required.text) if isinstance(required, Malformed) else required

    @staticmethod
    def _bad_annotation(value: Malformed) -> Status:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (
                f"pod annotation {MIN_GPU_DRIVER} must be a non-negative "
                f'integer, got "{value.text}"',
            ),
            NAME,
        )

    # --- queueing hints ----------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
                self._after_pod_update,
            ),
        )

    def _after_node_change(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        modified = as_node(new)
        if modified is None:
            return QueueingHint.QUEUE
        minimum = self.required_major(pod)
        if isinstance(minimum, Malformed):
            return QueueingHint.QUEUE_SKIP  # only fixing the pod can help
        if not self._satisfies(modified, minimum):
            return QueueingHint.QUEUE_SKIP
        original = as_node(old)
        if original is not None and self._satisfies(original, minimum):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _after_pod_update(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        original, modified = as_pod(old), as_pod(new)
        if original is None or modified is None:
            return QueueingHint.QUEUE
        if self.required_major(original) == self.required_major(modified):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


SPEC = PluginSpec(NAME, GPUDriver, GPUDriverArgs)
