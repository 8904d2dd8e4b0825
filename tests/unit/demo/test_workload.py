from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from asched.api import decode_pod
from asched.api.podgroup import POD_GROUP_LABEL
from asched.app import scheduler_options
from asched.config import load_config
from asched.demo.topology import ZONE, demo_nodes
from asched.demo.workload import (
    GANG,
    GANG_SCHEDULER,
    NATIVE_GANG,
    NATIVE_GANG_SIZE,
    SEED_SCHEDULER,
    demo_workload,
)
from asched.plugins.registry import in_tree_registry

DATA = resources.files("asched.demo.data")
SEED = Path(__file__).parents[2] / "data" / "configs" / "seed-node-affinity-plugin.yaml"


def test_the_demo_runs_the_seed_configuration_verbatim() -> None:
    assert DATA.joinpath("seed-config.yaml").read_bytes() == SEED.read_bytes()


def test_each_config_has_the_profile_its_pods_name() -> None:
    reg = in_tree_registry()
    profiles = {}
    for name in ("seed-config.yaml", "gang-config.yaml"):
        opts = scheduler_options(load_config(DATA.joinpath(name).read_text(), reg))
        profiles.update({p.scheduler_name: p for p in opts.profiles})
    assert set(profiles) == {SEED_SCHEDULER, GANG_SCHEDULER}
    assert profiles[SEED_SCHEDULER].plugins["queueSort"] == [("PrioritySort", 0)]
    assert profiles[GANG_SCHEDULER].plugins["queueSort"] == [("Coscheduling", 0)]
    assert ("Coscheduling", 0) in profiles[GANG_SCHEDULER].plugins["permit"]
    assert {p.scheduler for p in demo_workload().pods} == set(profiles)


def test_the_seed_gpu_pod_is_the_articles() -> None:
    gpu = demo_workload().pod("gpu-pod").manifest
    assert gpu == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gpu-pod"},
        "spec": {
            "schedulerName": "custom-scheduler",
            "containers": [{"name": "gpu-container", "image": "nginx"}],
            "nodeSelector": {"node-type": "gpu"},
        },
    }


def test_workload_pods_decode_and_say_what_they_show() -> None:
    w = demo_workload()
    names = [p.name for p in w.pods]
    assert len(set(names)) == len(names)
    for p in w.pods:
        if p.manifest is None:  # created by the StatefulSet controller
            continue
        raw = {
            **p.manifest,
            "metadata": {**p.manifest["metadata"], "namespace": w.namespace, "uid": p.name},
        }
        pod = decode_pod(raw)
        assert pod.scheduler_name == p.scheduler
        assert p.shows
    assert [p.name for p in w.pods if p.expect_pending] == ["big-pod"]


def test_the_gang_has_exactly_min_member_members() -> None:
    w = demo_workload()
    group, _native = w.pod_groups
    assert group["metadata"]["name"] == GANG
    members = [
        p
        for p in w.pods
        if p.manifest is not None
        and p.manifest["metadata"].get("labels", {}).get(POD_GROUP_LABEL) == GANG
    ]
    assert len(members) == group["spec"]["minMember"] == 3
    assert {p.scheduler for p in members} == {GANG_SCHEDULER}


def test_the_native_gang_is_eight_members_inside_one_rack() -> None:
    w = demo_workload()
    _group, native = w.pod_groups
    assert native["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert native["spec"] == {
        "schedulingPolicy": {"gang": {"minCount": NATIVE_GANG_SIZE}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
    }
    members = [
        p
        for p in w.pods
        if p.manifest is not None
        and p.manifest["spec"].get("schedulingGroup") == {"podGroupName": NATIVE_GANG}
    ]
    assert len(members) == NATIVE_GANG_SIZE == 8
    assert {p.scheduler for p in members} == {GANG_SCHEDULER}


@pytest.mark.parametrize("count", [4, 8, 12])
def test_stateful_set_replicas_have_one_local_pv_per_zone_on_untainted_nodes(count: int) -> None:
    nodes = demo_nodes(count)
    w = demo_workload(nodes)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for _path, body in w.objects:
        by_kind.setdefault(body["kind"], []).append(body)
    (sts,) = by_kind["StatefulSet"]
    replicas = sts["spec"]["replicas"]
    assert [p.name for p in w.pods if p.manifest is None] == [f"db-{i}" for i in range(replicas)]
    untainted = {n.name: n.labels[ZONE] for n in nodes if not n.taints}
    zones = {}
    for pv in by_kind["PersistentVolume"]:
        terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        (node,) = terms[0]["matchExpressions"][0]["values"]
        zones[untainted[node]] = node
    assert len(zones) == replicas == 3
    (cls,) = by_kind["StorageClass"]
    assert cls["volumeBindingMode"] == "WaitForFirstConsumer"
    template = sts["spec"]["volumeClaimTemplates"][0]
    assert template["spec"]["storageClassName"] == cls["metadata"]["name"]
