"""NodeVolumeLimits: registered, and harmless.

kube-scheduler's NodeVolumeLimits (nodevolumelimits/csi.go) counts a node's attached CSI
volumes against CSINode allocatable counts. asched does not count them yet: PreFilter
answers Skip and Filter accepts, so kube-scheduler's default plugin set and configuration
files that name the plugin load unchanged.

Not covered, compared with kube-scheduler: CSI attach limits from CSINode objects, in-tree
volume migration to CSI for counting, VolumeAttachment-based counting.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEventWithHint
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.status import Status, skip
from asched.framework.types import PreFilterResult


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Nothing to check yet: Skip at PreFilter, accept at Filter."""

    NAME = "NodeVolumeLimits"

    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle
        self._skip = skip(self.NAME)

    @property
    def name(self) -> str:
        return self.NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, self._skip

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Never rejects, so no event can change its verdict.
        return ()


NODE_VOLUME_LIMITS_SPEC = PluginSpec(NodeVolumeLimits.NAME, NodeVolumeLimits, None)
