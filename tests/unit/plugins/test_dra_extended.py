"""Extended resources backed by DRA (DRAExtendedResource, GA in 1.37): the requests and
container mappings of the pod's claim (createRequestsAndMappings), and the plugin's
Filter, Reserve, Unreserve and PostFilter with that claim."""

from __future__ import annotations

from typing import Any

from asched.api.dra import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    decode_device_class,
    decode_resource_claim,
    decode_resource_slice,
)
from asched.api.pod import decode_pod
from asched.framework.cycle_state import CycleState
from asched.framework.types import NodeToStatus
from asched.plugins.deviceclasses import DEVICE_CLASSES, resolver
from asched.plugins.dynamicresources.extended import (
    RequestMapping,
    requests_and_mappings,
)
from asched.plugins.dynamicresources.state import STATE_KEY
from asched.plugins.dynamicresources.tracker import RESOURCE_CLAIMS, RESOURCE_SLICES
from asched.testing import dra
from asched.testing.builders import make_node, make_pod
from asched.testing.runner import Runner
from tests.unit.plugins.test_dynamicresources import World

GPU = "example.com/gpu"


def gpu_class() -> dict[str, Any]:
    body = dra.device_class("gpu")
    body["spec"]["extendedResourceName"] = GPU
    return body


CLASSES = resolver([decode_device_class(gpu_class())])


def pod_with(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> Any:
    def container(c: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"name": c["name"], "image": "x"}
        out["resources"] = {"requests": c["requests"], "limits": c["requests"]}
        if c.get("sidecar"):
            out["restartPolicy"] = "Always"
        return out

    return decode_pod(
        {
            "metadata": {"namespace": "default", "name": "p", "uid": "u"},
            "spec": {
                "initContainers": [container(c) for c in init or ()],
                "containers": [container(c) for c in containers],
            },
        }
    )


def summary(pod: Any) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    requests, mappings = requests_and_mappings(pod, {GPU: 1}, CLASSES)
    return (
        [(r.name, r.exactly.count) for r in requests if r.exactly is not None],
        [(m.container, m.request) for m in mappings],
    )


def test_one_container() -> None:
    # The request is named after the container's index and the resource's rank among
    # the container's sorted request names (cpu < example.com/gpu).
    pod = pod_with([{"name": "main", "requests": {"cpu": "1", GPU: "2"}}])
    assert summary(pod) == ([("container-0-request-1", 2)], [("main", "container-0-request-1")])


def test_an_init_container_reuses_the_devices_of_a_later_container() -> None:
    pod = pod_with(
        [{"name": "main", "requests": {GPU: "2"}}], init=[{"name": "setup", "requests": {GPU: "1"}}]
    )
    assert summary(pod) == (
        [("container-1-request-0", 2)],
        [("main", "container-1-request-0"), ("setup", "container-1-request-0")],
    )


def test_init_containers_share_the_largest_extra_request() -> None:
    """Two init containers need 3 and 4, the main container 2: each init container takes
    the main one's 2 and asks for the rest; only the larger extra request (2) is made,
    and both init containers map to it."""
    pod = pod_with(
        [{"name": "main", "requests": {GPU: "2"}}],
        init=[
            {"name": "a", "requests": {GPU: "3"}},
            {"name": "b", "requests": {GPU: "4"}},
        ],
    )
    assert summary(pod) == (
        [("container-1-request-0", 2), ("container-2-request-0", 2)],
        [
            ("main", "container-2-request-0"),
            ("a", "container-2-request-0"),
            ("a", "container-1-request-0"),
            ("b", "container-2-request-0"),
            ("b", "container-1-request-0"),
        ],
    )


def test_sidecars_are_long_lived() -> None:
    pod = pod_with(
        [{"name": "main", "requests": {GPU: "1"}}],
        init=[{"name": "proxy", "requests": {GPU: "1"}, "sidecar": True}],
    )
    requests, _ = summary(pod)
    assert requests == [("container-0-request-0", 1), ("container-1-request-0", 1)]


def world(*nodes: Any, claims: tuple[dict[str, Any], ...] = ()) -> Runner:
    return Runner(
        ["NodeResourcesFit", "DynamicResources"],
        nodes=list(nodes),
        objects={
            DEVICE_CLASSES.resource: [decode_device_class(gpu_class())],
            RESOURCE_SLICES.resource: [
                decode_resource_slice(
                    dra.resource_slice("b-gpu", "b", [dra.device("gpu-0"), dra.device("gpu-1")])
                )
            ],
            RESOURCE_CLAIMS.resource: [decode_resource_claim(c) for c in claims],
        },
    )


async def test_the_devices_go_where_the_node_does_not_advertise_the_resource() -> None:
    runner = world(make_node("a").obj(), make_node("b").obj())
    result = await runner.schedule(make_pod("p").request(GPU, "2").obj())
    assert result.selected == "b"
    assert result.filter["a"] is not None
    assert result.filter["a"].reasons == ("cannot allocate all claims",)


async def test_a_node_that_advertises_the_resource_keeps_it_for_node_resources_fit() -> None:
    runner = world(make_node("a").resource(GPU, "4").obj(), make_node("c").obj())
    result = await runner.schedule(make_pod("p").request(GPU, "2").obj())
    assert result.selected == "a"


async def test_too_many_devices_fit_nowhere() -> None:
    runner = world(make_node("a").obj(), make_node("b").obj())
    result = await runner.schedule(make_pod("p").request(GPU, "3").obj())
    assert result.selected is None
    assert {n: st.reasons for n, st in result.filter.items() if st is not None} == {
        "a": ("cannot allocate all claims",),
        "b": ("cannot allocate all claims",),
    }


def existing_claim(pod_uid: str) -> dict[str, Any]:
    claim = dra.resource_claim("p-extended-resources-x", dra.device_request("gpu", "gpu"))
    claim["metadata"]["uid"] = "claim-x"
    claim["metadata"]["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    claim["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": pod_uid, "controller": True}
    ]
    return claim


async def test_a_claim_left_in_the_api_blocks_the_pod_and_post_filter_deletes_it() -> None:
    pod = make_pod("p").request(GPU, "2").obj()
    w = World(nodes=("b",), classes=(gpu_class(),), claims=(existing_claim(pod.uid),))
    state, pre, results = w.filter_all(pod)
    assert pre is None
    st = results["b"]
    assert st is not None
    assert st.reasons == ("cannot schedule extended resource claim",)
    _, post = await w.plugin.post_filter(state, pod, NodeToStatus())
    assert post is not None
    assert post.reasons == ("deletion of ResourceClaim completed",)
    path, body = w.client.patches[-1]
    assert path.endswith("/resourceclaims/p-extended-resources-x")
    assert body == {"preconditions": {"uid": "claim-x"}}


def test_unreserve_queues_the_deletion_of_a_created_claim() -> None:
    pod = make_pod("p").request(GPU, "2").obj()
    w = World(nodes=("b",), classes=(gpu_class(),), claims=(existing_claim(pod.uid),))
    state = CycleState()
    w.plugin.pre_filter(state, pod, w.nodes)
    s = state.get(STATE_KEY)
    assert s is not None
    assert s.extended is not None
    assert s.extended.name == "p-extended-resources-x"
    w.plugin.unreserve(state, pod, "b")
    assert list(w.plugin.releaser.deleting) == ["claim-x"]
    assert RequestMapping("c", GPU, "r").json() == {
        "containerName": "c",
        "resourceName": GPU,
        "requestName": "r",
    }
