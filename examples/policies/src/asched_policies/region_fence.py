"""RegionFence: a pod may only land in the regions it is allowed - the seed's "地域保护".

The allowed regions come from the pod's annotation `policies.asched.dev/regions`
("cn-north,cn-east"), or, when the pod has none (or it lists no region), from
`args.defaultRegions`. The annotation replaces the defaults rather than narrowing them:
the defaults are a profile-wide default, not a fence the pod cannot leave.

- PreFilter reads the allowed set once per cycle; with no fence at all it answers Skip so
  Filter is not run.
- Filter accepts a node whose `args.labelKey` label (topology.kubernetes.io/region by
  default) is one of the allowed regions; any other node, including one without the
  label, is rejected as UnschedulableAndUnresolvable ("node(s) outside the pod's allowed
  regions"): preempting pods cannot move a node to another region.
- Fast form: `filter_batch` answers for every node at once from the region label's
  column (one set-membership test over the label's codes), and `pod_key` (the pod's
  allowed regions) signs pods so the profile keeps opportunistic batching on. `filter`
  stays as the per-node reference; `asched.testing.check_fast_forms` holds the two equal.
- Events: a node added or relabelled requeues the pod only when the node is now inside
  its fence and was not before (like NodeAffinity's isSchedulableAfterNodeChange); an
  update of the pod itself requeues it when its allowed regions changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

from asched.api import Node, Pod
from asched.framework import (
    ActionType,
    ArgsError,
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
from asched.plugins.helpers import as_node, as_pod, check_fields, field_path, read_str_list

from asched_policies.args import read_key
from asched_policies.policy_annotations import REGIONS, parse_regions

NAME = "RegionFence"
DEFAULT_LABEL_KEY = "topology.kubernetes.io/region"
ERR_REASON = "node(s) outside the pod's allowed regions"

_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,), NAME)
_SKIP = skip(NAME)
_ALLOWED_KEY: StateKey[frozenset[str]] = StateKey("PreFilter" + NAME)


@dataclass(frozen=True, slots=True)
class RegionFenceArgs:
    label_key: str = DEFAULT_LABEL_KEY
    # Regions for pods without the annotation; empty = such pods are not fenced.
    default_regions: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("labelKey", "defaultRegions"), path)
        label_key = read_key(raw, "labelKey", path, DEFAULT_LABEL_KEY)
        regions = read_str_list(raw, "defaultRegions", path)
        for i, region in enumerate(regions):
            # A blank or comma-bearing entry would be a region no annotation can name.
            if not region.strip() or "," in region:
                raise ArgsError(
                    f"{field_path(path, 'defaultRegions')}[{i}]",
                    f'Invalid value: "{region}": must be a non-empty region name without ","',
                )
        return cls(label_key, frozenset(r.strip() for r in regions))


Args = RegionFenceArgs


class RegionFence(
    PreFilterPlugin, FilterPlugin, BatchFilterPlugin, NodeStaticPlugin, EnqueueExtensions
):
    def __init__(self, args: RegionFenceArgs | None, handle: Handle) -> None:
        self._args = args or RegionFenceArgs()
        self._label_key = self._args.label_key
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def allowed_regions(self, pod: Pod) -> frozenset[str]:
        """The pod's fence; empty when the pod may run in any region."""
        own = parse_regions(pod.annotations.get(REGIONS))
        return own or self._args.default_regions

    def _inside(self, node: Node, allowed: frozenset[str]) -> bool:
        return node.labels.get(self._label_key) in allowed

    # --- PreFilter / Filter ------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        allowed = self.allowed_regions(pod)
        if not allowed:
            return None, _SKIP
        state.write(_ALLOWED_KEY, allowed)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        allowed = state.get(_ALLOWED_KEY)
        if allowed is None:
            # PreFilter disabled in this profile: work it out here.
            allowed = self.allowed_regions(pod)
            if not allowed:
                return None
        return None if self._inside(node, allowed) else _REJECT

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        allowed = state.get(_ALLOWED_KEY)
        if allowed is None:
            allowed = self.allowed_regions(pod)
            if not allowed:
                return None
        passed = cols.label(self._label_key).isin(allowed, rows)
        return None if passed.all() else BatchVerdict.constant(passed, _REJECT)

    def pod_key(self, pod: Pod) -> PodKey:
        # Everything Filter reads of the pod: its fence.
        return tuple(sorted(self.allowed_regions(pod)))

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
        allowed = self.allowed_regions(pod)
        if allowed and not self._inside(modified, allowed):
            return QueueingHint.QUEUE_SKIP
        original = as_node(old)
        if original is not None and allowed and self._inside(original, allowed):
            # It was inside the fence already: the pod was rejected for another reason.
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _after_pod_update(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        original, modified = as_pod(old), as_pod(new)
        if original is None or modified is None:
            return QueueingHint.QUEUE
        if self.allowed_regions(original) != self.allowed_regions(modified):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


SPEC = PluginSpec(NAME, RegionFence, RegionFenceArgs)
