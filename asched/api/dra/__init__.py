"""Dynamic Resource Allocation objects (resource.k8s.io/v1), decoded once per version.

What the DynamicResources plugin reads: DeviceClasses (CEL selectors every device of the
class must pass), ResourceClaims (device requests, and the allocation once made),
ResourceSlices (the devices a driver publishes for a node: attributes and capacity).
ResourceClaimTemplates are not here: kube-controller-manager's resourceclaim controller
turns them into claims and writes the claim's name into the pod's
status.resourceClaimStatuses, which is all the scheduler reads (as kube-scheduler does).

The package holds the objects in two modules, claims.py (DeviceClasses, ResourceClaims)
and slices.py (ResourceSlices, DeviceTaintRules), over decoding.py's shared helpers.
"""

from asched.api.dra.claims import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    API_VERSION,
    DEVICE_CLASS_RESOURCE_PREFIX,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    FINALIZER,
    GROUP,
    VERSION,
    Allocation,
    ConsumerRef,
    ControllerRef,
    DeviceClass,
    DeviceCondition,
    DeviceRequest,
    DeviceResult,
    DeviceSubRequest,
    DeviceToleration,
    MatchAttribute,
    ResourceClaim,
    decode_device_class,
    decode_resource_claim,
)
from asched.api.dra.slices import (
    AttributeValue,
    CapacityRequestPolicy,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceCapacity,
    DeviceTaint,
    DeviceTaintRule,
    ResourceSlice,
    decode_device_taint_rule,
    decode_resource_slice,
)

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "API_VERSION",
    "DEVICE_CLASS_RESOURCE_PREFIX",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "FINALIZER",
    "GROUP",
    "VERSION",
    "Allocation",
    "AttributeValue",
    "CapacityRequestPolicy",
    "ConsumerRef",
    "ControllerRef",
    "CounterConsumption",
    "CounterSet",
    "Device",
    "DeviceCapacity",
    "DeviceClass",
    "DeviceCondition",
    "DeviceRequest",
    "DeviceResult",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceTaintRule",
    "DeviceToleration",
    "MatchAttribute",
    "ResourceClaim",
    "ResourceSlice",
    "decode_device_class",
    "decode_device_taint_rule",
    "decode_resource_claim",
    "decode_resource_slice",
]
