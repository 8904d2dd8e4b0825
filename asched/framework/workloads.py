"""The native gang API as the framework sees it: the PodGroup informer every profile shares.

kube-scheduler keeps native PodGroups in its cache (podGroupStates) whether or not a plugin
asks; asched's scheduler starts this informer for the group cycle, and the GangScheduling
plugin reads the same store. It is optional: a cluster that does not serve
scheduling.k8s.io/v1beta1 (GenericWorkload off) leaves it empty.
"""

from __future__ import annotations

from asched.api.composite import CompositePodGroup, decode_composite_podgroup
from asched.api.workload import NativePodGroup, Workload, decode_native_podgroup, decode_workload
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest

NATIVE_POD_GROUPS: InformerRequest[NativePodGroup] = InformerRequest(
    resource="podgroups.scheduling.k8s.io/v1beta1",
    list_path="/apis/scheduling.k8s.io/v1beta1/podgroups",
    decode=decode_native_podgroup,
    event_resource=EventResource.SCHEDULING_POD_GROUP,
    optional=True,
)

# Workloads are read only to report bad ones (kube-scheduler itself schedules from
# PodGroups); no plugin registers their events.
WORKLOADS: InformerRequest[Workload] = InformerRequest(
    resource="workloads.scheduling.k8s.io/v1beta1",
    list_path="/apis/scheduling.k8s.io/v1beta1/workloads",
    decode=decode_workload,
    event_resource=EventResource.WORKLOAD,
    optional=True,
)

# CompositePodGroups (gate CompositePodGroup): the informer starts only with the gate on,
# when GangScheduling asks for it; the group cycle reads the same store.
COMPOSITE_POD_GROUPS: InformerRequest[CompositePodGroup] = InformerRequest(
    resource="compositepodgroups.scheduling.k8s.io/v1alpha3",
    list_path="/apis/scheduling.k8s.io/v1alpha3/compositepodgroups",
    decode=decode_composite_podgroup,
    event_resource=EventResource.COMPOSITE_POD_GROUP,
    optional=True,
)
