"""DeviceClasses as extended resources (DRAExtendedResource, GA and locked on in 1.37).

A pod may ask for DRA devices as an extended resource: `example.com/gpu: 2` when a
DeviceClass names `example.com/gpu` in spec.extendedResourceName, or
`deviceclass.resource.kubernetes.io/<class>` for any class. Where a node advertises no
such resource, NodeResourcesFit leaves it to DynamicResources, which allocates devices of
the class there (dynamicresources/extended.py).

Both plugins resolve names as Go's extendedresourcecache.ExtendedResourceCache does:
among classes naming one extended resource, the oldest (then the smallest name) wins.
The cache's answers after a deletion depend on its event order in Go; here they are
computed from the classes present, so they are the ones a freshly started
kube-scheduler gives.
"""

from __future__ import annotations

from collections.abc import Iterable

from asched.api.dra import DEVICE_CLASS_RESOURCE_PREFIX, DeviceClass, decode_device_class
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest, ObjectStore
from asched.plugins.helpers import is_extended_resource_name

DEVICE_CLASSES: InformerRequest[DeviceClass] = InformerRequest(
    resource="deviceclasses.resource.k8s.io/v1",
    list_path="/apis/resource.k8s.io/v1/deviceclasses",
    decode=decode_device_class,
    event_resource=EventResource.DEVICE_CLASS,
    optional=True,
)


def is_dra_extended_resource_name(name: str) -> bool:
    """util.IsDRAExtendedResourceName."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_RESOURCE_PREFIX)


def resolver(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """Extended resource name -> its DeviceClass (ExtendedResourceCache.GetDeviceClass)."""
    out: dict[str, DeviceClass] = {}
    explicit: dict[str, DeviceClass] = {}
    for cls in classes:
        out[DEVICE_CLASS_RESOURCE_PREFIX + cls.name] = cls
        name = cls.extended_resource_name
        if not name:
            continue
        held = explicit.get(name)
        if held is None or (cls.creation_timestamp, cls.name) < (
            held.creation_timestamp,
            held.name,
        ):
            explicit[name] = cls
    out.update(explicit)
    return out


def class_provided(store: ObjectStore[DeviceClass], names: Iterable[str]) -> frozenset[str]:
    """The extended resources among `names` some DeviceClass provides; the store is read
    only when a name could be one (shouldDelegateResourceToDRA's class lookup)."""
    wanted = [n for n in names if is_dra_extended_resource_name(n)]
    if not wanted:
        return frozenset()
    classes = resolver(store.list())
    return frozenset(n for n in wanted if n in classes)
