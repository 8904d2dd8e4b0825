"""The default volume plugins (kube-scheduler volumebinding, volumerestrictions,
volumezone, nodevolumelimits). What is and is not covered is listed in each module."""

from asched.plugins.volumes.node_volume_limits import NODE_VOLUME_LIMITS_SPEC, NodeVolumeLimits
from asched.plugins.volumes.volume_binding import SPEC as VOLUME_BINDING_SPEC
from asched.plugins.volumes.volume_binding import VolumeBinding, VolumeBindingArgs
from asched.plugins.volumes.volume_restrictions import SPEC as VOLUME_RESTRICTIONS_SPEC
from asched.plugins.volumes.volume_restrictions import VolumeRestrictions
from asched.plugins.volumes.volume_zone import SPEC as VOLUME_ZONE_SPEC
from asched.plugins.volumes.volume_zone import VolumeZone

__all__ = [
    "NODE_VOLUME_LIMITS_SPEC",
    "VOLUME_BINDING_SPEC",
    "VOLUME_RESTRICTIONS_SPEC",
    "VOLUME_ZONE_SPEC",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeBindingArgs",
    "VolumeRestrictions",
    "VolumeZone",
]
