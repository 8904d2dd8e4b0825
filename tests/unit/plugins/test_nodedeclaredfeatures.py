"""NodeDeclaredFeatures: the feature registry's inference, the filter, and the hints
(kube-scheduler v1.37.2 plugins/nodedeclaredfeatures, component-helpers
nodedeclaredfeatures)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from asched.api import Node, Pod, decode_node, decode_pod
from asched.api.nodefeatures import REGISTRY, infer_for_scheduling
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code
from asched.plugins.nodedeclaredfeatures import (
    ERR_REASON_UNSATISFIED,
    NAME,
    NodeDeclaredFeatures,
)
from asched.scheduler.handlers import node_update_action
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info

RESTART_ALL = "RestartAllContainersOnContainerExits"
RULE = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}


def restart_all_pod(key: str = "containers") -> Pod:
    raw = make_pod("p").raw()
    c = {"name": "x", "image": "i", "restartPolicy": "Never", "restartPolicyRules": [RULE]}
    raw["spec"][key] = [*raw["spec"].get(key, []), c]
    return decode_pod(raw)


def declaring(*features: str, name: str = "n1") -> Node:
    raw = make_node(name).raw()
    raw["status"]["declaredFeatures"] = list(features)
    return decode_node(raw)


def test_registry_is_sorted_by_name() -> None:
    assert list(REGISTRY) == sorted(REGISTRY)
    assert len(REGISTRY) == 9


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ({"containers": [{"name": "c", "restartPolicyRules": [RULE]}]}, {RESTART_ALL}),
        ({"initContainers": [{"name": "c", "restartPolicyRules": [RULE]}]}, {RESTART_ALL}),
        (
            {"containers": [{"name": "c", "restartPolicyRules": [{**RULE, "action": "Restart"}]}]},
            set(),
        ),
        ({"hostNetwork": True, "hostUsers": False}, {"UserNamespacesHostNetworkSupport"}),
        ({"hostNetwork": True}, set()),
        ({"hostUsers": False}, set()),
        (
            {
                "ephemeralContainers": [
                    {"name": "e", "volumeMounts": [{"name": "v", "bindMountOptions": ["ro"]}]}
                ]
            },
            {"VolumeBindMountOptions"},
        ),
        ({"containers": [{"name": "c", "volumeMounts": [{"name": "v"}]}]}, set()),
    ],
)
def test_infer_for_scheduling(spec: dict[str, Any], want: set[str]) -> None:
    assert infer_for_scheduling(spec) == want


def _filter(pod: Pod, node: Node) -> tuple[Code, tuple[str, ...]] | None:
    p = NodeDeclaredFeatures(None, FakeHandle())
    state = CycleState()
    _, st = p.pre_filter(state, pod, [])
    if st is not None:
        assert st.code == Code.SKIP
        return None
    out = p.filter(state, pod, node_info(node))
    return None if out is None else (out.code, out.reasons)


def test_pods_without_requirements_skip() -> None:
    assert _filter(make_pod("p").obj(), make_node("n1").obj()) is None


@pytest.mark.parametrize("key", ["containers", "initContainers"])
def test_filter_needs_the_declared_feature(key: str) -> None:
    pod = restart_all_pod(key)
    assert _filter(pod, declaring(RESTART_ALL, "VolumeBindMountOptions")) is None
    reject = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSATISFIED,))
    assert _filter(pod, declaring()) == reject
    assert _filter(pod, declaring("VolumeBindMountOptions", "NoSuchFeature")) == reject


def test_filter_without_prefilter_state_is_an_error() -> None:
    st = NodeDeclaredFeatures(None, FakeHandle()).filter(
        CycleState(), restart_all_pod(), node_info(declaring(RESTART_ALL))
    )
    assert st is not None
    assert (st.code, st.plugin) == (Code.ERROR, NAME)


def test_registered_events_and_hints() -> None:
    p = NodeDeclaredFeatures(None, FakeHandle())
    [node_ev, pod_ev] = p.events_to_register()
    assert node_ev.event.resource == EventResource.NODE
    assert node_ev.event.action == ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
    assert pod_ev.event.resource == EventResource.UNSCHEDULED_POD
    assert pod_ev.event.action == ActionType.UPDATE
    pod = restart_all_pod()
    assert node_ev.hint is not None
    assert pod_ev.hint is not None
    assert node_ev.hint(pod, None, declaring()) == QueueingHint.QUEUE
    assert node_ev.hint(pod, declaring("A"), declaring("A")) == QueueingHint.QUEUE_SKIP
    assert node_ev.hint(pod, declaring(), declaring(RESTART_ALL)) == QueueingHint.QUEUE
    plain = make_pod("p").obj()
    assert pod_ev.hint(pod, pod, replace(pod, labels={"a": "b"})) == QueueingHint.QUEUE_SKIP
    assert pod_ev.hint(pod, pod, plain) == QueueingHint.QUEUE


def test_declared_features_change_is_its_own_node_update() -> None:
    action = node_update_action(declaring(), declaring(RESTART_ALL))
    assert action == ActionType.UPDATE_NODE_DECLARED_FEATURE
