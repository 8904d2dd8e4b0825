"""The pod signature fragment of NodeResourcesFit and NodeResourcesBalancedAllocation.

Both sign the pod's requests (Fit.SignPod, BalancedAllocation.SignPod in v1.37.2): the
aggregate computePodResourceRequest gives, under one key, so a pod's requests count once.
A pod that asks for an extended resource some DeviceClass provides cannot be signed
("signature disabled when dra extended resources are used in the cluster"): whether DRA
serves it depends on each node (shouldDelegateResourceToDRA).
"""

from __future__ import annotations

from asched.api import Pod
from asched.framework.handle import Handle
from asched.framework.signatures import RESOURCES, SignFragment, SignResult, unsignable
from asched.plugins.deviceclasses import DEVICE_CLASSES, class_provided

_DRA_UNSIGNABLE = "signature disabled when dra extended resources are used in the cluster"


def sign_requests(pod: Pod, handle: Handle, plugin: str) -> SignResult:
    r = pod.requests
    if class_provided(handle.store(DEVICE_CLASSES), (n for n, q in r.scalar.items() if q)):
        return unsignable(_DRA_UNSIGNABLE, plugin)
    value = (r.milli_cpu, r.memory, r.ephemeral_storage, sorted(r.scalar.items()))
    return (SignFragment(RESOURCES, value),)
