"""bound_to, the copy the scheduling cycle assumes, is dataclasses.replace's copy."""

from __future__ import annotations

from dataclasses import fields, replace

from asched.api import Pod, bound_to, decode_pod


def _full_pod() -> Pod:
    return decode_pod(
        {
            "metadata": {
                "namespace": "ns",
                "name": "p",
                "uid": "u",
                "resourceVersion": "7",
                "labels": {"app": "a"},
                "annotations": {"k": "v"},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ReplicaSet", "name": "rs", "uid": "r"}
                ],
            },
            "spec": {
                "schedulerName": "custom-scheduler",
                "priority": 5,
                "nodeSelector": {"node-type": "gpu"},
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [
                    {
                        "name": "c",
                        "image": "img:1",
                        "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}},
                        "ports": [{"containerPort": 80, "hostPort": 8080}],
                    }
                ],
            },
            "status": {"phase": "Pending", "nominatedNodeName": "n0"},
        }
    )


def test_bound_to_equals_replace_and_leaves_the_pod_alone() -> None:
    pod = _full_pod()
    copy = bound_to(pod, "n1")
    assert copy == replace(pod, node_name="n1")
    assert copy is not pod
    assert pod.node_name == ""
    # Every field is carried over, not only the ones this pod happens to set.
    for f in fields(Pod):
        if f.name != "node_name":
            assert getattr(copy, f.name) is getattr(pod, f.name), f.name
