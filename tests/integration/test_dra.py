"""DynamicResources end to end: ResourceSlices for kwok nodes, claims, asched as a process.

No DRA driver runs: the test publishes the ResourceSlices itself, as a driver would, and
checks what asched writes to the claim (allocation and reservation) and where the pod lands.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from asched.localcluster import ApiError, ClusterClient, NodeSpec
from asched.testing import dra
from tests.builders import make_native_pod_group, make_pod
from tests.integration.conftest import RESOURCE, DraObjects, NodeFactory, unique
from tests.integration.harness import AschedHarness, profile_config
from tests.integration.helpers import poll

DRIVER = "gpu.example.com"
CONFIG = profile_config("dra-test")


async def _claim(admin: ClusterClient, ns: str, name: str) -> dict[str, Any]:
    return await admin.get(f"{RESOURCE}/namespaces/{ns}/resourceclaims/{name}")


async def test_pod_with_claim_is_bound_and_claim_allocated(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """Only the second node has a GPU: the pod goes there and the claim names its device."""
    plain, gpu_node = await kwok_nodes([NodeSpec("plain"), NodeSpec("gpu")])
    cls = unique("gpu")
    await dra_objects.create("deviceclasses", dra.device_class(cls, f'device.driver == "{DRIVER}"'))
    await dra_objects.create(
        "resourceslices",
        dra.resource_slice(
            unique("slice"), gpu_node, [dra.device("gpu-0", {"model": "a100"}, {"memory": "40Gi"})]
        ),
    )
    selector = f'device.attributes["{DRIVER}"].model == "a100"'
    pod = make_pod("p", namespace).scheduler("dra-test").resource_claim("gpu", claim="c")
    async with asched.run(CONFIG):
        # The pod first: PreEnqueue holds it until its claim exists, and the claim's
        # ResourceClaimAdd (queueing hint: the pod's own claim) lets it go.
        created = await asched.create_pod(pod.manifest())
        await anyio.sleep(1)
        assert not (await admin.get(f"/api/v1/namespaces/{namespace}/pods/p"))["spec"].get(
            "nodeName"
        )
        await admin.post(
            f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
            dra.resource_claim("c", dra.device_request("gpu", cls, selector), namespace=namespace),
        )
        bound = await asched.wait_bound({"p"}, within=10)
    assert bound["p"] == gpu_node != plain
    status = (await _claim(admin, namespace, "c"))["status"]
    assert status["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": gpu_node, "device": "gpu-0"}
    ]
    term = status["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]
    assert term["matchFields"][0]["values"] == [gpu_node]
    assert status["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": created["metadata"]["uid"]}
    ]


async def test_template_claim_and_competing_pods(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """Two pods, each with a claim from one template, one GPU in the cluster: the
    resourceclaim controller makes the claims, one pod gets the GPU, the other waits with
    Go's message on its FailedScheduling event."""
    _, cls = await _gpu_node(kwok_nodes, dra_objects)
    await admin.post(
        f"{RESOURCE}/namespaces/{namespace}/resourceclaimtemplates",
        dra.resource_claim_template("t", dra.device_request("gpu", cls), namespace=namespace),
    )
    async with asched.run(CONFIG):
        for name in ("p1", "p2"):
            pod = (
                make_pod(name, namespace).scheduler("dra-test").resource_claim("gpu", template="t")
            )
            await asched.create_pod(pod.manifest())

        async def outcome() -> tuple[list[str], str] | None:
            pods = (await admin.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
            bound = sorted(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName"))
            if len(bound) != 1:
                return None
            loser = "p2" if bound == ["p1"] else "p1"
            for e in await asched.events(loser):
                if e.get("reason") == "FailedScheduling":
                    return bound, str(e["note"])
            return None

        with anyio.fail_after(45):
            bound, note = await poll(outcome, interval=0.3)
    assert bound in (["p1"], ["p2"])
    assert note.startswith("0/1 nodes are available: 1 cannot allocate all claims.")


async def test_a_rack_nic_claim_is_shared_by_pods_on_two_nodes_of_the_rack(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """Issue 36 as a user met it: a ResourceSlice with a nodeSelector for rack r1 (nodes
    n1 and n2) holds a NIC. pb allocates claim nic-b on n2; the allocation gets the
    slice's selector, as kube-scheduler writes it (Go's createNodeSelector), so pb2,
    pinned to n1, shares the claim and binds there, and the claim is reserved for both.
    pc, pinned to n3 of another rack, cannot use the claim."""
    rack = unique("r")
    n1, n2, n3 = await kwok_nodes(
        [
            NodeSpec("n1", labels={"nic.example.com/rack": rack}),
            NodeSpec("n2", labels={"nic.example.com/rack": rack}),
            NodeSpec("n3", labels={"nic.example.com/rack": unique("r")}),
        ]
    )
    driver = f"{unique('rack')}.nic.example.com"
    cls = unique("nic")
    await dra_objects.create("deviceclasses", dra.device_class(cls, f'device.driver == "{driver}"'))
    selector = dra.match_expressions(("nic.example.com/rack", "In", [rack]))
    pool = unique("rack-nics")
    await dra_objects.create(
        "resourceslices",
        dra.shared_slice(
            pool, [dra.device("nic-0")], pool=pool, node_selector=selector, driver=driver
        ),
    )
    await admin.post(
        f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
        dra.resource_claim("nic-b", dra.device_request("nic", cls), namespace=namespace),
    )

    def pinned(name: str, node: str) -> dict[str, Any]:
        pod = (
            make_pod(name, namespace)
            .scheduler("dra-test")
            .node_selector({"kubernetes.io/hostname": node})
            .resource_claim("nic", claim="nic-b")
        )
        return pod.manifest()

    uids = {}
    async with asched.run(CONFIG):
        for name, node in (("pb", n2), ("pb2", n1)):
            created = await asched.create_pod(pinned(name, node))
            uids[name] = created["metadata"]["uid"]
            assert (await asched.wait_bound({name}, within=20))[name] == node
        await asched.create_pod(pinned("pc", n3))
        note = str((await asched.wait_event("pc", "FailedScheduling", within=20))["note"])
    assert "1 resourceclaim not available on the node" in note
    status = (await _claim(admin, namespace, "nic-b"))["status"]
    assert status["allocation"]["nodeSelector"] == selector
    assert status["allocation"]["devices"]["results"] == [
        {"request": "nic", "driver": driver, "pool": pool, "device": "nic-0"}
    ]
    assert status["reservedFor"] == [
        {"resource": "pods", "name": name, "uid": uids[name]} for name in ("pb", "pb2")
    ]


async def _gpu_node(kwok_nodes: NodeFactory, dra_objects: DraObjects) -> tuple[str, str]:
    """One kwok node publishing one GPU, and a DeviceClass for it: (node, class)."""
    (node,) = await kwok_nodes([NodeSpec("gpu")])
    cls = unique("gpu")
    await dra_objects.create("deviceclasses", dra.device_class(cls))
    await dra_objects.create(
        "resourceslices", dra.resource_slice(unique("slice"), node, [dra.device("gpu-0")])
    )
    return node, cls


async def _gpu_node_with_claim(
    admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory, dra_objects: DraObjects
) -> str:
    """_gpu_node, and claim "c" for one device of its class."""
    node, cls = await _gpu_node(kwok_nodes, dra_objects)
    await admin.post(
        f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
        dra.resource_claim("c", dra.device_request("gpu", cls), namespace=namespace),
    )
    return node


async def test_post_filter_deallocates_a_claim_allocated_where_the_pod_cannot_go(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """The claim is allocated on a node that does not exist and reserved for nobody: Filter
    finds it available nowhere, PostFilter deallocates it (Go's deallocateOrDeletePodClaims,
    its words on the FailedScheduling event), the claim's update requeues the pod, and the
    next attempt allocates the GPU that exists."""
    node = await _gpu_node_with_claim(admin, namespace, kwok_nodes, dra_objects)
    claim_path = f"{RESOURCE}/namespaces/{namespace}/resourceclaims/c"
    result = {"request": "gpu", "driver": DRIVER, "pool": "elsewhere", "device": "gpu-0"}
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["elsewhere"]}]}
    await admin.patch(
        f"{claim_path}/status",
        {
            "status": {
                "allocation": {
                    "devices": {"results": [result]},
                    "nodeSelector": {"nodeSelectorTerms": [term]},
                }
            }
        },
    )
    pod = make_pod("p", namespace).scheduler("dra-test").resource_claim("gpu", claim="c")
    async with asched.run(CONFIG):
        await asched.create_pod(pod.manifest())
        bound = await asched.wait_bound({"p"}, within=20)
    assert bound["p"] == node
    notes = [
        str(e["note"]) for e in await asched.events("p") if e.get("reason") == "FailedScheduling"
    ]
    assert notes
    assert notes[0].startswith(
        "0/1 nodes are available: 1 resourceclaim not available on the node. "
        "deallocation of ResourceClaim completed"
    )
    status = (await _claim(admin, namespace, "c"))["status"]
    assert status["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": node, "device": "gpu-0"}
    ]


def _deny_bindings(namespace: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ValidatingAdmissionPolicy (and its binding) refusing every pods/binding in the
    namespace: the scheduler's Bind fails after its PreBind wrote the claim."""
    api = "admissionregistration.k8s.io/v1"
    policy = {
        "apiVersion": api,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["pods/binding"],
                    }
                ]
            },
            "validations": [
                {"expression": f'request.namespace != "{namespace}"', "message": "no binding"}
            ],
        },
    }
    binding = {
        "apiVersion": api,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return policy, binding


async def test_failed_bind_takes_the_pod_out_of_reserved_for(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """Bind fails after PreBind allocated and reserved the claim: Unreserve takes the pod
    out of status.reservedFor and leaves the allocation (Go's Unreserve). Once bindings
    are allowed again, the next attempt reserves the allocated claim and binds."""
    node = await _gpu_node_with_claim(admin, namespace, kwok_nodes, dra_objects)
    admission = "/apis/admissionregistration.k8s.io/v1"
    name = unique("deny-binding")
    policy, binding = _deny_bindings(namespace, name)
    await admin.post(f"{admission}/validatingadmissionpolicies", policy)
    await admin.post(f"{admission}/validatingadmissionpolicybindings", binding)
    try:
        await _wait_policy_active(admin, namespace, node)
        pod = make_pod("p", namespace).scheduler("dra-test").resource_claim("gpu", claim="c")
        async with asched.run(CONFIG):
            created = await asched.create_pod(pod.manifest())

            async def released() -> dict[str, Any] | None:
                status = (await _claim(admin, namespace, "c")).get("status") or {}
                if status.get("allocation") and not status.get("reservedFor"):
                    return status
                return None

            with anyio.fail_after(20):
                # PreBind wrote the allocation and reservation; the failed Bind's
                # Unreserve withdrew the reservation (the backoff keeps it so >= 1 s).
                status = await poll(released, interval=0.1)
            assert status["allocation"]["devices"]["results"][0]["pool"] == node
            await admin.delete(f"{admission}/validatingadmissionpolicybindings/{name}")
            bound = await asched.wait_bound({"p"}, within=30)
        assert bound["p"] == node
        status = (await _claim(admin, namespace, "c"))["status"]
        assert status["reservedFor"] == [
            {"resource": "pods", "name": "p", "uid": created["metadata"]["uid"]}
        ]
    finally:
        for path in (
            f"{admission}/validatingadmissionpolicybindings/{name}",
            f"{admission}/validatingadmissionpolicies/{name}",
        ):
            try:
                await admin.delete(path)
            except ApiError as err:
                if err.status != 404:
                    raise


async def _wait_policy_active(admin: ClusterClient, namespace: str, node: str) -> None:
    """The API server loads policies asynchronously: bind throwaway pods until one is
    refused."""
    n = 0

    async def refused() -> bool | None:
        nonlocal n
        n += 1
        probe = make_pod(f"probe-{n}", namespace).scheduler("nobody")
        await admin.post(f"/api/v1/namespaces/{namespace}/pods", probe.manifest())
        target = {"apiVersion": "v1", "kind": "Node", "name": node}
        try:
            await admin.post(
                f"/api/v1/namespaces/{namespace}/pods/probe-{n}/binding",
                {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": f"probe-{n}"},
                    "target": target,
                },
            )
        except ApiError as err:
            return True if err.status in (403, 422) else None
        return None

    with anyio.fail_after(20):
        await poll(refused, interval=0.5)


async def test_binding_waits_for_the_device_binding_conditions(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """A device with a binding condition (DRADeviceBindingConditions, beta in 1.37): the
    claim is allocated and reserved with the condition copied into its result, the pod is
    not bound and gets BindingConditionsPending, until the "driver" (the test) reports the
    condition True in the claim's status.devices; then the pod binds."""
    (node,) = await kwok_nodes([NodeSpec("gpu")])
    cls = unique("gpu")
    await dra_objects.create("deviceclasses", dra.device_class(cls))
    device = dra.device("gpu-0")
    device["bindingConditions"] = ["example.com/attached"]
    device["bindingFailureConditions"] = ["example.com/failed"]
    await dra_objects.create("resourceslices", dra.resource_slice(unique("slice"), node, [device]))
    claims = f"{RESOURCE}/namespaces/{namespace}/resourceclaims"
    await admin.post(
        claims, dra.resource_claim("c", dra.device_request("gpu", cls), namespace=namespace)
    )
    pod = make_pod("p", namespace).scheduler("dra-test").resource_claim("gpu", claim="c")
    async with asched.run(CONFIG):
        await asched.create_pod(pod.manifest())

        async def pending() -> dict[str, Any] | None:
            events = await asched.events("p")
            if not any(e.get("reason") == "BindingConditionsPending" for e in events):
                return None
            claim_status: dict[str, Any] = (await _claim(admin, namespace, "c"))["status"]
            return claim_status

        with anyio.fail_after(20):
            status = await poll(pending, interval=0.2)
        (result,) = status["allocation"]["devices"]["results"]
        assert result["bindingConditions"] == ["example.com/attached"]
        assert result["bindingFailureConditions"] == ["example.com/failed"]
        assert status["allocation"]["allocationTimestamp"]
        assert len(status["reservedFor"]) == 1
        await anyio.sleep(1)
        current = await admin.get(f"/api/v1/namespaces/{namespace}/pods/p")
        assert not current["spec"].get("nodeName")
        assert current["status"].get("nominatedNodeName") == node
        # The driver reports the device attached.
        await admin.patch(
            f"{claims}/c/status",
            {
                "status": {
                    "devices": [
                        {
                            "driver": DRIVER,
                            "pool": node,
                            "device": "gpu-0",
                            "conditions": [
                                {
                                    "type": "example.com/attached",
                                    "status": "True",
                                    "reason": "Attached",
                                    "message": "",
                                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                                }
                            ],
                        }
                    ]
                }
            },
        )
        bound = await asched.wait_bound({"p"}, within=15)
    assert bound["p"] == node


async def test_extended_resource_backed_by_a_device_class(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """DRAExtendedResource (GA in 1.37): a pod asks for `example.com/<class>: 2`, which a
    DeviceClass names as its extendedResourceName. No node advertises it; one publishes
    two devices. asched places the pod there, creates the pod's claim for extended
    resources (allocated, reserved, owned by the pod) and records the container mapping
    in the pod's status."""
    plain, gpu_node = await kwok_nodes([NodeSpec("plain"), NodeSpec("gpu")])
    cls = unique("gpu")
    resource = f"example.com/{cls}"
    body = dra.device_class(cls)
    body["spec"]["extendedResourceName"] = resource
    await dra_objects.create("deviceclasses", body)
    await dra_objects.create(
        "resourceslices",
        dra.resource_slice(unique("slice"), gpu_node, [dra.device("gpu-0"), dra.device("gpu-1")]),
    )
    pod = make_pod("p", namespace).scheduler("dra-test").request(resource, "2")
    manifest = pod.manifest()
    manifest["spec"]["containers"][0]["resources"]["limits"] = {resource: "2"}
    async with asched.run(CONFIG):
        created = await asched.create_pod(manifest)
        bound = await asched.wait_bound({"p"}, within=20)
    assert bound["p"] == gpu_node != plain
    claims = (await admin.get(f"{RESOURCE}/namespaces/{namespace}/resourceclaims"))["items"]
    (claim,) = claims
    meta = claim["metadata"]
    assert meta["name"].startswith("p-extended-resources-")
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    (request,) = claim["spec"]["devices"]["requests"]
    assert request["name"] == "container-0-request-0"
    assert request["exactly"]["deviceClassName"] == cls
    assert request["exactly"]["count"] == 2
    results = claim["status"]["allocation"]["devices"]["results"]
    assert sorted(r["device"] for r in results) == ["gpu-0", "gpu-1"]
    assert claim["status"]["reservedFor"][0]["uid"] == created["metadata"]["uid"]
    status = (await admin.get(f"/api/v1/namespaces/{namespace}/pods/p"))["status"]
    assert status["extendedResourceClaimStatus"] == {
        "resourceClaimName": meta["name"],
        "requestMappings": [
            {
                "containerName": manifest["spec"]["containers"][0]["name"],
                "resourceName": resource,
                "requestName": "container-0-request-0",
            }
        ],
    }


async def test_a_device_taint_rule_keeps_the_device_from_new_claims(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
) -> None:
    """DeviceTaintRules (GA in 1.37): a rule taints the first node's GPU NoSchedule; a
    claim without tolerations gets the other node's GPU, although the pod prefers the
    tainted one's node."""
    tainted, free = await kwok_nodes([NodeSpec("tainted"), NodeSpec("free")])
    cls = unique("gpu")
    await dra_objects.create("deviceclasses", dra.device_class(cls))
    for node in (tainted, free):
        await dra_objects.create(
            "resourceslices", dra.resource_slice(unique("slice"), node, [dra.device("gpu-0")])
        )
    await dra_objects.create(
        "devicetaintrules",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": {"name": unique("rule")},
            "spec": {
                "deviceSelector": {"driver": DRIVER, "pool": tainted},
                "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"},
            },
        },
    )
    await admin.post(
        f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
        dra.resource_claim("c", dra.device_request("gpu", cls), namespace=namespace),
    )
    pod = (
        make_pod("p", namespace)
        .scheduler("dra-test")
        .resource_claim("gpu", claim="c")
        .affinity(
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "preference": {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [tainted]}
                                ]
                            },
                        }
                    ]
                }
            }
        )
    )
    async with asched.run(CONFIG):
        await asched.create_pod(pod.manifest())
        bound = await asched.wait_bound({"p"}, within=15)
    assert bound["p"] == free


PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"


@pytest.mark.parametrize("gate", [True, False], ids=["workload-claims", "gate-off"])
async def test_a_podgroup_claim_is_reserved_for_the_group_across_its_pods(
    asched: AschedHarness,
    *,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    dra_objects: DraObjects,
    gate: bool,
) -> None:
    """Upstream's testWorkloadResourceClaims (test/integration/dra): a basic PodGroup
    lists claim `shared`; its first pod gets it allocated and, with
    DRAWorkloadResourceClaims, reserved for the PodGroup, while its own claim is reserved
    for the pod. A second pod, created after the first is bound, finds the group's
    reservation its own (its PreBind writes nothing to the shared claim) and is bound; the
    shared claim stays reserved for the group alone. With the gate off each pod
    reserves both claims for itself."""
    (node,) = await kwok_nodes([NodeSpec("gpu")])
    cls = unique("gpu")
    await dra_objects.create("deviceclasses", dra.device_class(cls, f'device.driver == "{DRIVER}"'))
    await dra_objects.create(
        "resourceslices",
        dra.resource_slice(unique("slice"), node, [dra.device("gpu-0"), dra.device("gpu-1")]),
    )
    for claim in ("shared", "own"):
        await admin.post(
            f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
            dra.resource_claim(claim, dra.device_request("gpu", cls), namespace=namespace),
        )
    group = await admin.post(
        PODGROUPS.format(ns=namespace),
        make_native_pod_group("g", namespace)
        .basic()
        .resource_claim("shared", claim="shared")
        .manifest(),
    )

    def member(name: str) -> dict[str, Any]:
        pod = (
            make_pod(name, namespace)
            .scheduler("dra-test")
            .scheduling_group("g")
            .resource_claim("shared", claim="shared")
            .resource_claim("own", claim="own")
        )
        return pod.manifest()

    gates = {"DRAWorkloadResourceClaims": True} if gate else None
    async with asched.run(CONFIG, feature_gates=gates):
        first = await asched.create_pod(member("p1"))
        await asched.wait_bound({"p1"}, within=15)
        second = await asched.create_pod(member("p2"))
        bound = await asched.wait_bound({"p2"}, within=15)
    assert bound == {"p2": node}

    def consumers(status: dict[str, Any]) -> list[tuple[str, str]]:
        return sorted((r["resource"], r["uid"]) for r in status.get("reservedFor") or ())

    pods = [("pods", first["metadata"]["uid"]), ("pods", second["metadata"]["uid"])]
    shared = (await _claim(admin, namespace, "shared"))["status"]
    own = (await _claim(admin, namespace, "own"))["status"]
    assert shared["allocation"]["devices"]["results"][0]["pool"] == node
    assert consumers(own) == sorted(pods)
    if gate:
        assert consumers(shared) == [("podgroups", group["metadata"]["uid"])]
        assert shared["reservedFor"][0]["apiGroup"] == "scheduling.k8s.io"
    else:
        assert consumers(shared) == sorted(pods)
