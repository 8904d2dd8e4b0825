"""The default volume plugins: VolumeBinding refuses claim-backed pods; the rest accept.

asched does not implement volume topology yet. What is and is not covered is listed in
volume_binding.py and placeholders.py.
"""

from asched.plugins.volumes.placeholders import (
    NODE_VOLUME_LIMITS_SPEC,
    VOLUME_RESTRICTIONS_SPEC,
    VOLUME_ZONE_SPEC,
    NodeVolumeLimits,
    VolumeRestrictions,
    VolumeZone,
)
from asched.plugins.volumes.volume_binding import (
    ERR_REASON_PVC,
    VolumeBinding,
    VolumeBindingArgs,
)
from asched.plugins.volumes.volume_binding import SPEC as VOLUME_BINDING_SPEC

__all__ = [
    "ERR_REASON_PVC",
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
