"""Every in-tree plugin registers kube-scheduler v1.37.2's events, with or without a hint.

One table for the whole registry, transcribed from each plugin's EventsToRegister in
pkg/scheduler/framework/plugins at the 1.37 default feature gates. Go's AssignedPod is
asched's `Pod` resource (asched reports only assigned pods' changes under it) and
TargetPod is `UnschedulablePod` (the pending pod's own updates). Each plugin's hint
results are pinned by its own tests (test_<plugin>.py, test_volume_hints.py).
Where asched registers less than Go, the row says why; a change on either side fails
here until the table, the code and docs/differential.md agree again.
"""

from __future__ import annotations

import pytest

from asched.framework.events import ActionType as A
from asched.framework.events import EventResource as R
from asched.plugins.registry import in_tree_specs
from tests.unit.plugins.fakes_pods import StoreHandle

ADD_UPDATE = A.ADD | A.UPDATE

# plugin -> [(resource, action, has a hint function)], in Go's order.
GO_EVENTS: dict[str, list[tuple[R, A, bool]]] = {
    # NodeName.EventsToRegister: a node add, no hint (always Queue).
    "NodeName": [(R.NODE, A.ADD, False)],
    "NodeUnschedulable": [
        (R.NODE, A.ADD | A.UPDATE_NODE_TAINT, True),
        (R.UNSCHEDULED_POD, A.UPDATE_POD_TOLERATION, True),
    ],
    "TaintToleration": [
        (R.NODE, A.ADD | A.UPDATE_NODE_TAINT, True),
        (R.UNSCHEDULED_POD, A.UPDATE_POD_TOLERATION, True),
    ],
    "NodeAffinity": [(R.NODE, A.ADD | A.UPDATE_NODE_LABEL, True)],
    "NodePorts": [(R.POD, A.DELETE, True), (R.NODE, A.ADD, False)],
    # Fit.EventsToRegister with InPlacePodVerticalScaling (GA). Not registered: the
    # DeviceClass add/update of DRAExtendedResource (GA in 1.37), since asched does not
    # back extended resources with DRA devices; the scale-up events belong to an alpha.
    "NodeResourcesFit": [
        (R.POD, A.DELETE, True),
        (R.NODE, A.ADD | A.UPDATE_NODE_ALLOCATABLE, True),
        (R.DEVICE_CLASS, ADD_UPDATE, True),  # DRAExtendedResource
        (R.POD, A.UPDATE_POD_SCALE_DOWN, True),
        (R.UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN, True),
    ],
    "VolumeRestrictions": [
        (R.POD, A.DELETE, True),
        (R.NODE, A.ADD, False),
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD, True),
    ],
    # CSILimits.EventsToRegister.
    "NodeVolumeLimits": [
        (R.CSI_NODE, A.ADD, False),
        (R.CSI_NODE, A.UPDATE, True),
        (R.POD, A.DELETE, True),
        (R.PERSISTENT_VOLUME_CLAIM, A.ADD, True),
        (R.VOLUME_ATTACHMENT, A.DELETE, True),
    ],
    "VolumeBinding": [
        (R.STORAGE_CLASS, ADD_UPDATE, True),
        (R.PERSISTENT_VOLUME_CLAIM, ADD_UPDATE, True),
        (R.PERSISTENT_VOLUME, ADD_UPDATE, False),
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL, False),
        (R.CSI_NODE, ADD_UPDATE, True),
        (R.CSI_DRIVER, A.UPDATE, True),
        (R.CSI_STORAGE_CAPACITY, ADD_UPDATE, True),
    ],
    "VolumeZone": [
        (R.STORAGE_CLASS, A.ADD, True),
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL, False),
        (R.PERSISTENT_VOLUME_CLAIM, ADD_UPDATE, True),
        (R.PERSISTENT_VOLUME, ADD_UPDATE, True),
    ],
    "PodTopologySpread": [
        (R.POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE, True),
        (R.UNSCHEDULED_POD, A.UPDATE_POD_TOLERATION | A.UPDATE_POD_LABEL, True),
        (R.NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT, True),
    ],
    "InterPodAffinity": [
        (R.POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE, True),
        (R.UNSCHEDULED_POD, A.UPDATE_POD_LABEL, True),
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL, True),
    ],
    "SchedulingGates": [(R.UNSCHEDULED_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, True)],
    # NodeDeclaredFeatures (GA in 1.37): any update of the pod itself, with a hint.
    "NodeDeclaredFeatures": [
        (R.NODE, A.ADD | A.UPDATE_NODE_DECLARED_FEATURE, True),
        (R.UNSCHEDULED_POD, A.UPDATE, True),
    ],
    "DynamicResources": [
        (R.NODE, A.ADD | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_ALLOCATABLE, False),
        (R.RESOURCE_CLAIM, A.ADD | A.UPDATE | A.DELETE, True),
        (R.UNSCHEDULED_POD, A.UPDATE_POD_GENERATED_RESOURCE_CLAIM, True),
        (R.DEVICE_CLASS, ADD_UPDATE, False),
        (R.RESOURCE_SLICE, ADD_UPDATE, False),
    ],
    # GangScheduling (GenericWorkload): the CompositePodGroup add belongs to an alpha.
    "GangScheduling": [
        (R.UNSCHEDULED_POD, A.ADD, True),
        (R.POD, A.ADD, True),
        (R.SCHEDULING_POD_GROUP, A.ADD, True),
        (R.SCHEDULING_POD_GROUP, A.UPDATE, True),
    ],
    # With SchedulerAsyncPreemption (beta, on): AssignedPod/Delete for its PreEnqueue,
    # with a hint that always says QueueSkip.
    "DefaultPreemption": [(R.POD, A.DELETE, True)],
}

# Plugins with no EnqueueExtensions: Go's QueueSort, Score-only, binder and placement
# plugins never reject a pod.
NO_EVENTS = {
    "PrioritySort",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
    "TopologyPlacementGenerator",
    "PodGroupPodsCount",
}

# Not a kube-scheduler plugin (scheduler-plugins' Coscheduling, pinned in its own tests).
OUT_OF_TREE_ORIGIN = {"Coscheduling"}


def _registered(name: str) -> list[tuple[R, A, bool]] | None:
    (spec,) = [s for s in in_tree_specs() if s.name == name]
    plugin = spec.new(spec.parse_args(None, ""), StoreHandle())
    events = getattr(plugin, "events_to_register", None)
    if events is None:
        return None
    return [(r.event.resource, r.event.action, r.hint is not None) for r in events()]


def test_every_in_tree_plugin_is_in_the_table() -> None:
    names = {s.name for s in in_tree_specs()}
    assert names == set(GO_EVENTS) | NO_EVENTS | OUT_OF_TREE_ORIGIN


@pytest.mark.parametrize("plugin", sorted(GO_EVENTS))
def test_registered_events_are_kube_schedulers(plugin: str) -> None:
    assert _registered(plugin) == GO_EVENTS[plugin]


@pytest.mark.parametrize("plugin", sorted(NO_EVENTS))
def test_plugins_that_never_reject_register_nothing(plugin: str) -> None:
    assert _registered(plugin) is None
