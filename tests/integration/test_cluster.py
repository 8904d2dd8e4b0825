"""The local control plane does what asched's tests rely on: kwok nodes turn Ready, a pod
bound by the scheduler identity turns Running and can be deleted, and that identity can do
no more than manifests/rbac.yaml grants."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from asched.localcluster import ApiError, ClusterClient, JsonObject, LocalCluster, NodeSpec, Taint
from tests.builders import make_pod
from tests.integration.conftest import NodeFactory, unique
from tests.integration.helpers import bind, pod_path, poll, status_of

TAINT = Taint("dedicated", "batch", "NoSchedule")


def twenty_nodes() -> list[NodeSpec]:
    return [
        NodeSpec(
            name=f"{i:02d}",
            cpu="8",
            memory="16Gi",
            gpus=2 if i % 5 == 0 else 0,
            labels={"topology.kubernetes.io/zone": f"zone-{i % 3}"},
            taints=(TAINT,) if i % 2 else (),
        )
        for i in range(20)
    ]


async def test_kwok_nodes_become_ready_with_labels_taints_and_resources(
    kwok_nodes: NodeFactory, admin: ClusterClient
) -> None:
    names = await kwok_nodes(twenty_nodes())

    nodes = {n["metadata"]["name"]: n for n in await admin.list("/api/v1/nodes")}
    assert set(names) <= set(nodes)
    for i, name in enumerate(names):
        node = nodes[name]
        ready = [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready == ["True"], name
        assert node["metadata"]["labels"]["topology.kubernetes.io/zone"] == f"zone-{i % 3}"
        assert node["metadata"]["labels"]["type"] == "kwok"
        taints = [(t["key"], t["value"], t["effect"]) for t in node["spec"].get("taints", [])]
        # Only our taint: TaintNodesByCondition is off, so no not-ready taint is added.
        assert taints == ([("dedicated", "batch", "NoSchedule")] if i % 2 else [])
        alloc = node["status"]["allocatable"]
        assert alloc == node["status"]["capacity"]
        assert (alloc["cpu"], alloc["memory"], alloc["pods"]) == ("8", "16Gi", "110")
        assert alloc.get("nvidia.com/gpu") == ("2" if i % 5 == 0 else None)


async def _pod(admin: ClusterClient, namespace: str, name: str) -> JsonObject | None:
    try:
        return await admin.get(pod_path(namespace, name))
    except ApiError as err:
        if err.status == 404:
            return None
        raise


async def test_pod_bound_by_scheduler_identity_runs_and_deletes(
    kwok_nodes: NodeFactory,
    admin: ClusterClient,
    scheduler_client: ClusterClient,
    namespace: str,
) -> None:
    names = await kwok_nodes(twenty_nodes())
    tainted = names[1]
    raw: dict[str, Any] = (
        make_pod("p", namespace)
        .scheduler("nobody")
        .cpu("500m")
        .memory("256Mi")
        .toleration("dedicated", "batch", "NoSchedule")
        .raw()
    )
    raw["metadata"].pop("uid", None)
    await admin.post(pod_path(namespace), raw)

    await bind(scheduler_client, namespace, "p", tainted)

    async def running() -> JsonObject | None:
        pod = await _pod(admin, namespace, "p")
        assert pod is not None
        return pod if pod["status"].get("phase") == "Running" else None

    with anyio.fail_after(30):
        pod = await poll(running)
    assert pod["spec"]["nodeName"] == tainted
    assert pod["status"]["podIP"]
    assert any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"]["conditions"])

    await admin.delete(pod_path(namespace, "p"))

    async def gone() -> bool | None:
        return True if await _pod(admin, namespace, "p") is None else None

    with anyio.fail_after(30):  # kwok's pod-delete stage finishes the graceful deletion
        await poll(gone)


async def test_scheduler_identity_is_least_privilege(
    scheduler_client: ClusterClient, admin: ClusterClient, namespace: str
) -> None:
    sched = scheduler_client
    node = {"metadata": {"name": unique("forbidden")}}
    pod = make_pod("x", namespace).raw()
    pod["metadata"].pop("uid", None)

    forbidden = {
        "create node": sched.post("/api/v1/nodes", node),
        "delete namespace": sched.delete(f"/api/v1/namespaces/{namespace}"),
        "create pod": sched.post(pod_path(namespace), pod),
        "list secrets": sched.get(f"/api/v1/namespaces/{namespace}/secrets"),
        "create podgroup": sched.post(
            f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups",
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "pg"},
                "spec": {"minMember": 2},
            },
        ),
        "get lease of another name": sched.get(
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
        ),
    }
    for what, request in forbidden.items():
        assert await status_of(request) == 403, what

    allowed = {
        "list nodes": sched.get("/api/v1/nodes"),
        "list pods": sched.get("/api/v1/pods"),
        "list namespaces": sched.get("/api/v1/namespaces"),
        "list podgroups": sched.get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups"),
        "list pdbs": sched.get("/apis/policy/v1/poddisruptionbudgets"),
        "list csinodes": sched.get("/apis/storage.k8s.io/v1/csinodes"),
        "create event": sched.post(
            f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
            {
                "metadata": {"name": unique("ev")},
                "eventTime": "2026-01-01T00:00:00.000000Z",
                "reportingController": "asched",
                "reportingInstance": "asched-test",
                "action": "Scheduling",
                "reason": "Scheduled",
                "type": "Normal",
                "regarding": {"kind": "Pod", "namespace": namespace, "name": "x"},
            },
        ),
    }
    for what, request in allowed.items():
        assert await status_of(request) == 200, what


async def test_scheduler_identity_updates_podgroup_status(
    scheduler_client: ClusterClient, admin: ClusterClient, namespace: str
) -> None:
    path = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"
    created = await admin.post(
        path,
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "gang"},
            "spec": {
                "minMember": 3,
                "minResources": {"cpu": "3", "memory": 1024},
                "scheduleTimeoutSeconds": 10,
            },
        },
    )
    assert created["spec"]["minResources"] == {"cpu": "3", "memory": 1024}

    patched = await scheduler_client.patch(
        f"{path}/gang/status", {"status": {"phase": "Scheduling", "scheduled": 2}}
    )
    assert patched["status"] == {"phase": "Scheduling", "scheduled": 2}
    # The status subresource ignores spec changes, and the main resource ignores status.
    again = await admin.patch(f"{path}/gang", {"status": {"phase": "Failed"}})
    assert again["status"]["phase"] == "Scheduling"


async def test_cluster_exposes_kubeconfigs_for_both_identities(cluster: LocalCluster) -> None:
    for path, user in (
        (cluster.admin_kubeconfig, cluster.admin.user),
        (cluster.scheduler_kubeconfig, "system:asched"),
    ):
        async with await ClusterClient.from_kubeconfig(path) as client:
            review = await client.post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            )
        assert review["status"]["userInfo"]["username"] == user
        assert (path.stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize("grace", [0, None])
async def test_namespace_deletion_is_finalized(admin: ClusterClient, grace: int | None) -> None:
    """kube-controller-manager's namespace controller empties and removes namespaces."""
    name = unique("gc")
    await admin.post("/api/v1/namespaces", {"metadata": {"name": name}})
    pod = make_pod("unbound", name).scheduler("nobody").raw()
    pod["metadata"].pop("uid", None)
    await admin.post(pod_path(name), pod)
    params = {"gracePeriodSeconds": grace} if grace is not None else None
    await admin.delete(f"/api/v1/namespaces/{name}", params=params)

    async def gone() -> bool | None:
        return None if await admin.exists(f"/api/v1/namespaces/{name}") else True

    # Usually a few seconds; the namespace controller requeues with its estimate of the
    # remaining content's grace and walks every API group's discovery, which took over
    # 60 s on this two-core machine at a load of 9, so the bound only catches a hang.
    with anyio.fail_after(180):
        await poll(gone)


async def test_the_native_gang_api_is_served_with_its_fields(
    admin: ClusterClient, namespace: str
) -> None:
    # Workload, PodGroup (scheduling.k8s.io/v1beta1) and spec.schedulingGroup exist only
    # with the runtime config and the GenericWorkload gate; the apiserver drops gated
    # fields silently otherwise, so read everything back.
    api = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{namespace}"
    gang = {"gang": {"minCount": 2}}
    await admin.post(
        f"{api}/workloads",
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {"name": "job"},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": gang}]},
        },
    )
    await admin.post(
        f"{api}/podgroups",
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "workers"},
            "spec": {
                "schedulingPolicy": gang,
                "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
            },
        },
    )
    raw: dict[str, Any] = make_pod("member", namespace).scheduler("nobody").raw()
    raw["metadata"].pop("uid", None)
    raw["spec"]["schedulingGroup"] = {"podGroupName": "workers"}
    await admin.post(pod_path(namespace), raw)

    workload = await admin.get(f"{api}/workloads/job")
    group = await admin.get(f"{api}/podgroups/workers")
    pod = await admin.get(pod_path(namespace, "member"))
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == gang
    assert group["spec"]["schedulingPolicy"] == gang
    assert group["spec"]["schedulingConstraints"]["topology"] == [
        {"key": "topology.kubernetes.io/zone"}
    ]
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "workers"}
