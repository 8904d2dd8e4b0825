"""VolumeRestrictions, NodeVolumeLimits and VolumeZone: registered, and harmless.

asched does not implement volume topology yet (see volume_binding.py: pods with
PersistentVolumeClaims are refused there). These three default plugins only judge pods
through their volumes' claims and PersistentVolumes, so with claims refused they have
nothing to decide: PreFilter answers Skip, Filter accepts. They exist so kube-scheduler's
default plugin set and configuration files that name them load unchanged.

Not covered, compared with kube-scheduler:
- VolumeRestrictions: ReadWriteOncePod conflicts and legacy in-line disk conflicts
  (GCE PD, AWS EBS, RBD, iSCSI volumes written directly in the pod spec).
- NodeVolumeLimits: CSI attach limits from CSINode objects.
- VolumeZone: PersistentVolume topology labels against node zones/regions.
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


class _AcceptAll(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """A volume plugin with nothing to check: Skip at PreFilter, accept at Filter."""

    NAME = ""

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


class VolumeRestrictions(_AcceptAll):
    NAME = "VolumeRestrictions"


class NodeVolumeLimits(_AcceptAll):
    NAME = "NodeVolumeLimits"


class VolumeZone(_AcceptAll):
    NAME = "VolumeZone"


VOLUME_RESTRICTIONS_SPEC = PluginSpec(VolumeRestrictions.NAME, VolumeRestrictions, None)
NODE_VOLUME_LIMITS_SPEC = PluginSpec(NodeVolumeLimits.NAME, NodeVolumeLimits, None)
VOLUME_ZONE_SPEC = PluginSpec(VolumeZone.NAME, VolumeZone, None)
