"""DynamicResources: claims allocated/unallocated, class and request selectors, count and
All, taken devices, Reserve/Unreserve, PreBind's writes, messages, hints and events."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import structlog.testing

from asched.api import Pod
from asched.api.dra import (
    Device,
    ResourceClaim,
    decode_device_class,
    decode_resource_claim,
    decode_resource_slice,
)
from asched.api.errors import DecodeError
from asched.client.protocol import ApiError, TransportError, failure_kind, failure_message
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.status import Code, Status
from asched.framework.types import NodeToStatus
from asched.plugins.deviceclasses import DEVICE_CLASSES
from asched.plugins.dynamicresources import SPEC, DynamicResources
from asched.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    NodeAllocationFailure,
)
from asched.plugins.dynamicresources.cel import CelRuntimeError, compile_expression
from asched.plugins.dynamicresources.releaser import ReservationReleaser
from asched.plugins.dynamicresources.state import STATE_KEY
from asched.plugins.dynamicresources.tracker import (
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    AllocatedState,
)
from asched.testing import dra
from asched.testing.builders import make_node, make_pod
from asched.testing.fakes import FakeClient, FakeHandle, node_info
from asched.testing.runner import Runner, enable

GPU = "gpu.example.com"


def gpu_slice(node: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return dra.resource_slice(f"{node}-gpu", node, list(devices))


def gpu(name: str, model: str = "a100", memory: str = "40Gi") -> dict[str, Any]:
    return dra.device(name, {"model": model}, {"memory": memory})


def allocated(claim: dict[str, Any], node: str, device: str, uid: str = "") -> dict[str, Any]:
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": GPU, "pool": node, "device": device}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            },
        }
    }
    return claim


class RecordingClient(FakeClient):
    def __init__(self) -> None:
        super().__init__()
        self.patches: list[tuple[str, Any]] = []
        self.version = 10

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        self.patches.append((path, kw["body"]))
        self.version += 1
        ns, name = path.split("/namespaces/")[1].split("/resourceclaims/")
        body = kw["body"]
        return {
            "metadata": {
                "namespace": ns,
                "name": name.removesuffix("/status"),
                "uid": "claim-0",  # the only claim of the PreBind test
                "resourceVersion": str(self.version),
            },
            "status": body.get("status", {}),
        }


class World:
    """Nodes, DRA objects and the plugin over them."""

    def __init__(
        self,
        *,
        nodes: tuple[str, ...] = ("n1", "n2"),
        classes: tuple[dict[str, Any], ...] = (
            dra.device_class("gpu", f'device.driver == "{GPU}"'),
        ),
        claims: tuple[dict[str, Any], ...] = (),
        slices: tuple[dict[str, Any], ...] = (),
    ) -> None:
        self.nodes = [node_info(make_node(n).label("zone", n).obj()) for n in nodes]
        for i, c in enumerate(claims):
            c["metadata"].setdefault("uid", f"claim-{i}")
            c["metadata"].setdefault("resourceVersion", "5")
        self.client = RecordingClient()
        self.handle = FakeHandle(
            self.nodes,
            self.client,
            stores={
                RESOURCE_CLAIMS.resource: [decode_resource_claim(c) for c in claims],
                DEVICE_CLASSES.resource: [decode_device_class(c) for c in classes],
                RESOURCE_SLICES.resource: [decode_resource_slice(s) for s in slices],
            },
        )
        self.plugin = DynamicResources(None, self.handle)

    def filter_all(self, pod: Pod) -> tuple[CycleState, Status | None, dict[str, Status | None]]:
        state = CycleState()
        _, pre = self.plugin.pre_filter(state, pod, self.nodes)
        if pre is not None:
            return state, pre, {}
        return state, None, {ni.name: self.plugin.filter(state, pod, ni) for ni in self.nodes}


def claim_pod(name: str = "p", claim: str = "c") -> Pod:
    return make_pod(name).resource_claim("gpu", claim=claim).obj()


def fits(results: dict[str, Status | None]) -> list[str]:
    return sorted(n for n, st in results.items() if st is None)


def test_pod_without_claims_is_skipped() -> None:
    w = World()
    _, pre = w.plugin.pre_filter(CycleState(), make_pod("p").obj(), w.nodes)
    assert pre is not None
    assert pre.code == Code.SKIP
    assert w.plugin.pre_enqueue(make_pod("p").obj()) is None


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (claim_pod(), 'could not find ResourceClaim "default/c"'),
        (
            make_pod("p").resource_claim("gpu", template="t").obj(),
            'pod "default/p": ResourceClaim not created yet',
        ),
    ],
)
def test_pre_enqueue_waits_for_claims(pod: Pod, message: str) -> None:
    st = World().plugin.pre_enqueue(pod)
    assert st is not None
    assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def test_template_claim_must_be_owned_by_pod() -> None:
    claim = dra.resource_claim("p-gpu-x", dra.device_request("gpu", "gpu"))
    claim["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid", "controller": True}
    ]
    w = World(claims=(claim,))
    pod = make_pod("p").uid("other").resource_claim("gpu", template="t")
    st = w.plugin.pre_enqueue(pod.claim_status("gpu", "p-gpu-x").obj())
    assert st is not None
    assert st.message() == (
        "ResourceClaim default/p-gpu-x was not created for Pod default/p (Pod is not owner)"
    )
    owned = make_pod("p").uid("pod-uid").resource_claim("gpu", template="t")
    assert w.plugin.pre_enqueue(owned.claim_status("gpu", "p-gpu-x").obj()) is None


def test_claim_fits_only_the_node_with_the_device() -> None:
    w = World(
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n2", gpu("gpu-0")),),
    )
    _, pre, results = w.filter_all(claim_pod())
    assert pre is None
    assert fits(results) == ["n2"]
    st = results["n1"]
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "cannot allocate all claims",
    )


def test_missing_device_class() -> None:
    w = World(claims=(dra.resource_claim("c", dra.device_request("gpu", "nope")),))
    _, pre, _ = w.filter_all(claim_pod())
    assert pre is not None
    assert pre.message() == "request gpu: device class nope does not exist"


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (dra.device_request("gpu", "gpu", count=2), ["n2"]),
        (dra.device_request("gpu", "gpu", count=3), []),
        (dra.device_request("gpu", "gpu", mode="All"), ["n1", "n2"]),
        (
            dra.device_request(
                "gpu", "gpu", 'device.attributes["gpu.example.com"].model == "h100"'
            ),
            ["n2"],
        ),
        (
            dra.device_request(
                "gpu",
                "gpu",
                'device.capacity["gpu.example.com"].memory.compareTo(quantity("50Gi")) >= 0',
            ),
            ["n2"],
        ),
    ],
)
def test_requests(request_: dict[str, Any], expected: list[str]) -> None:
    w = World(
        claims=(dra.resource_claim("c", request_),),
        slices=(
            gpu_slice("n1", gpu("gpu-0")),
            gpu_slice("n2", gpu("gpu-0"), gpu("gpu-1", "h100", "80Gi")),
        ),
    )
    _, pre, results = w.filter_all(claim_pod())
    assert pre is None
    assert fits(results) == expected


def test_class_selector_filters_devices() -> None:
    w = World(
        classes=(dra.device_class("gpu", 'device.attributes["gpu.example.com"].model == "h100"'),),
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n1", gpu("gpu-0")), gpu_slice("n2", gpu("gpu-0", "h100"))),
    )
    assert fits(w.filter_all(claim_pod())[2]) == ["n2"]


def test_devices_allocated_to_other_claims_are_taken() -> None:
    w = World(
        claims=(
            allocated(dra.resource_claim("other", dra.device_request("gpu", "gpu")), "n1", "gpu-0"),
            dra.resource_claim("c", dra.device_request("gpu", "gpu")),
        ),
        slices=(gpu_slice("n1", gpu("gpu-0")), gpu_slice("n2", gpu("gpu-0"))),
    )
    assert fits(w.filter_all(claim_pod())[2]) == ["n2"]


def test_all_mode_fails_when_one_device_is_taken() -> None:
    w = World(
        claims=(
            allocated(dra.resource_claim("other", dra.device_request("gpu", "gpu")), "n1", "gpu-0"),
            dra.resource_claim("c", dra.device_request("gpu", "gpu", mode="All")),
        ),
        slices=(gpu_slice("n1", gpu("gpu-0"), gpu("gpu-1")), gpu_slice("n2", gpu("gpu-0"))),
    )
    assert fits(w.filter_all(claim_pod())[2]) == ["n2"]


def test_allocated_claim_follows_its_node_selector() -> None:
    w = World(
        claims=(
            allocated(dra.resource_claim("c", dra.device_request("gpu", "gpu")), "n1", "gpu-0"),
        ),
        slices=(gpu_slice("n1", gpu("gpu-0")),),
    )
    _, pre, results = w.filter_all(claim_pod())
    assert pre is None
    assert fits(results) == ["n1"]
    st = results["n2"]
    assert st is not None
    assert st.message() == "resourceclaim not available on the node"


def test_reserve_takes_the_device_until_unreserve() -> None:
    claims = (
        dra.resource_claim("c1", dra.device_request("gpu", "gpu")),
        dra.resource_claim("c2", dra.device_request("gpu", "gpu")),
    )
    w = World(claims=claims, slices=(gpu_slice("n1", gpu("gpu-0")),))
    first = claim_pod("p1", "c1")
    state, _, results = w.filter_all(first)
    assert fits(results) == ["n1"]
    assert w.plugin.reserve(state, first, "n1") is None
    # The second pod's claim cannot get the device the first one holds in flight.
    assert fits(w.filter_all(claim_pod("p2", "c2"))[2]) == []
    w.plugin.unreserve(state, first, "n1")
    assert fits(w.filter_all(claim_pod("p2", "c2"))[2]) == ["n1"]


def test_claim_in_flight_is_being_allocated() -> None:
    w = World(
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n1", gpu("gpu-0")),),
    )
    state, _, _ = w.filter_all(claim_pod("p1"))
    w.plugin.reserve(state, claim_pod("p1"), "n1")
    _, pre, _ = w.filter_all(claim_pod("p2"))
    assert pre is not None
    assert pre.message() == "resource claim default/c is in the process of being allocated"


def one_gpu() -> World:
    """Claim "c" for one GPU; n1 has one."""
    return World(
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n1", gpu("gpu-0")),),
    )


def reserved_on_n1(w: World, pod: Pod) -> CycleState:
    state, _, _ = w.filter_all(pod)
    assert w.plugin.reserve(state, pod, "n1") is None
    return state


def test_pre_bind_pre_flight_has_work_only_with_claims() -> None:
    # DynamicResources.PreBindPreFlight: Success when the pod has claims, else Skip.
    w = one_gpu()
    pod = claim_pod()
    assert w.plugin.pre_bind_pre_flight(reserved_on_n1(w, pod), pod, "n1") is None
    plain = make_pod("q").obj()
    state, _, _ = w.filter_all(plain)
    st = w.plugin.pre_bind_pre_flight(state, plain, "n1")
    assert st is not None
    assert st.code == Code.SKIP


async def test_pre_bind_writes_allocation_and_reservation() -> None:
    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    assert await w.plugin.pre_bind(state, pod, "n1") is None
    (fin_path, fin), (status_path, status) = w.client.patches
    assert fin_path.endswith("/namespaces/default/resourceclaims/c")
    assert fin["metadata"] == {
        "resourceVersion": "5",
        "finalizers": ["resource.kubernetes.io/delete-protection"],
    }
    assert status_path.endswith("/resourceclaims/c/status")
    assert status["metadata"] == {"resourceVersion": "11"}
    assert status["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": pod.uid}]
    assert status["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": GPU, "pool": "n1", "device": "gpu-0"}
    ]
    terms = status["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert terms[0]["matchFields"][0]["values"] == ["n1"]
    # No longer in flight; the written claim counts as allocated until the watch catches up.
    assert w.plugin.tracker.pending_allocation("claim-0") is None
    assert ("gpu.example.com", "n1", "gpu-0") in w.plugin.tracker.allocated_state().devices


async def test_a_claim_from_a_node_selector_slice_is_shared_across_its_nodes() -> None:
    """Issue 36: a NIC of a slice for the nodes of a rack (here zone In [n1, n2]) is
    allocated for pb on n2 with the slice's selector, as Go's createNodeSelector writes
    it; pb2 sharing the claim then fits n1 and n2 (not n3), and its PreBind adds it to
    the reservations beside pb without a new allocation."""
    rack = dra.match_expressions(("zone", "In", ["n1", "n2"]))
    w = World(
        nodes=("n1", "n2", "n3"),
        claims=(dra.resource_claim("nic-b", dra.device_request("gpu", "gpu")),),
        slices=(dra.shared_slice("rack-nics", [gpu("nic-0")], pool="rack", node_selector=rack),),
    )
    pb, pb2 = claim_pod("pb", "nic-b"), claim_pod("pb2", "nic-b")
    state, _, results = w.filter_all(pb)
    assert fits(results) == ["n1", "n2"]
    assert w.plugin.reserve(state, pb, "n2") is None
    assert await w.plugin.pre_bind(state, pb, "n2") is None
    allocation = w.client.patches[-1][1]["status"]["allocation"]
    assert allocation["nodeSelector"] == rack
    state, pre, results = w.filter_all(pb2)
    assert pre is None
    assert fits(results) == ["n1", "n2"]
    st = results["n3"]
    assert st is not None
    assert st.message() == "resourceclaim not available on the node"
    assert w.plugin.reserve(state, pb2, "n1") is None
    assert await w.plugin.pre_bind(state, pb2, "n1") is None
    status = w.client.patches[-1][1]["status"]
    assert "allocation" not in status
    assert [r["name"] for r in status["reservedFor"]] == ["pb", "pb2"]


def test_cel_compile_error_is_an_error_naming_the_class() -> None:
    w = World(
        classes=(dra.device_class("gpu", "device.driver =="),),
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n1", gpu("gpu-0")),),
    )
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert st.code == Code.ERROR
    assert st.message().startswith(
        "class gpu: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:"
    )


def test_cel_runtime_error_names_claim_and_device() -> None:
    w = World(
        claims=(
            dra.resource_claim(
                "c", dra.device_request("gpu", "gpu", 'device.attributes["gpu.example.com"].x == 1')
            ),
        ),
        slices=(gpu_slice("n1", gpu("gpu-0")),),
    )
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert st.code == Code.ERROR
    assert st.message().startswith(
        "claim default/c: selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: "
        "no such key: x"
    )


def test_events_to_register_as_go() -> None:
    events = [
        (e.event.resource, e.event.action, e.hint is not None)
        for e in World().plugin.events_to_register()
    ]
    assert events == [
        (
            EventResource.NODE,
            ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
            False,
        ),
        (
            EventResource.RESOURCE_CLAIM,
            ActionType.ADD | ActionType.UPDATE | ActionType.DELETE,
            True,
        ),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM, True),
        (EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE, False),
        (EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE, False),
    ]


def test_claim_hints() -> None:
    raw = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    raw["metadata"]["uid"] = "u1"
    mine = decode_resource_claim(raw)
    w = World(claims=(raw,))
    pod = claim_pod()
    other = decode_resource_claim(dra.resource_claim("x", dra.device_request("gpu", "gpu")))
    hint = w.plugin.hints.claim_changed
    assert hint(pod, None, mine) is QueueingHint.QUEUE
    assert hint(pod, None, other) is QueueingHint.QUEUE_SKIP
    assert hint(pod, mine, mine) is QueueingHint.QUEUE_SKIP
    assert hint(pod, other, None) is QueueingHint.QUEUE_SKIP
    was = decode_resource_claim(
        allocated(dra.resource_claim("x", dra.device_request("gpu", "gpu")), "n1", "g")
    )
    assert hint(pod, was, None) is QueueingHint.QUEUE
    assert hint(pod, was, other) is QueueingHint.QUEUE


def _owned(name: str, owner: Pod, *, alloc: bool = False, ns: str = "default") -> dict[str, Any]:
    raw = dra.resource_claim(name, dra.device_request("gpu", "gpu"), namespace=ns)
    raw["metadata"]["uid"] = f"uid-{ns}-{name}"
    raw["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": owner.name,
            "uid": owner.uid,
            "controller": True,
        }
    ]
    return allocated(raw, "n1", "g") if alloc else raw


_WAITING = make_pod("p").uid("pu").resource_claim("gpu", template="t").obj()
_NAMED = make_pod("p").uid("pu").resource_claim("gpu", template="t").claim_status("gpu", "p-gpu")
_BY_NAME = make_pod("q").uid("qu").resource_claim("gpu", claim="shared").obj()


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        # Waiting for its template's claim: the controller's Add of that very claim comes
        # before the pod's status names it, so the lookup fails (Go: QueueSkip).
        (_WAITING, None, ("p-gpu", _WAITING, False, "default"), QueueingHint.QUEUE_SKIP),
        (_WAITING, None, ("other", _BY_NAME, False, "default"), QueueingHint.QUEUE_SKIP),
        # A deallocation frees devices for any pod whose claims can be looked up.
        (
            _WAITING,
            ("x", _BY_NAME, True, "default"),
            ("x", _BY_NAME, False, "default"),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            _BY_NAME,
            ("x", _WAITING, True, "default"),
            ("x", _WAITING, False, "default"),
            QueueingHint.QUEUE,
        ),
        # Named in the pod's status, or in its spec: its claim's Add queues the pod ...
        (_NAMED.obj(), None, ("p-gpu", _WAITING, False, "default"), QueueingHint.QUEUE),
        (_BY_NAME, None, ("shared", _WAITING, False, "default"), QueueingHint.QUEUE),
        # ... but not a claim of that name in another namespace, nor another claim's
        # allocation.
        (_BY_NAME, None, ("shared", _WAITING, False, "other"), QueueingHint.QUEUE_SKIP),
        (
            _BY_NAME,
            ("y", _WAITING, False, "default"),
            ("y", _WAITING, True, "default"),
            QueueingHint.QUEUE_SKIP,
        ),
    ],
    ids=[
        "own-claim-before-status",
        "unrelated-add",
        "dealloc-but-lookup-fails",
        "dealloc-queues",
        "named-in-status",
        "named-in-spec",
        "same-name-other-namespace",
        "unrelated-allocated",
    ],
)
def test_claim_hint_asks_only_pods_that_name_the_claim(
    pod: Pod,
    old: tuple[str, Pod, bool, str] | None,
    new: tuple[str, Pod, bool, str],
    want: QueueingHint,
) -> None:
    """isSchedulableAfterClaimChange for the pods a claim event asks: what the fast
    path for pods that do not name the claim answers is what the lookup answers."""
    in_store = [_owned(*new[:2], ns=new[3]), _owned("shared", _WAITING)]
    w = World(
        claims=tuple(
            {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in in_store}.values()
        )
    )
    before = (
        None
        if old is None
        else decode_resource_claim(_owned(old[0], old[1], alloc=old[2], ns=old[3]))
    )
    after = decode_resource_claim(_owned(new[0], new[1], alloc=new[2], ns=new[3]))
    assert w.plugin.hints.claim_changed(pod, before, after) is want


def test_claim_hint_queues_on_any_status_change_and_skips_a_metadata_one() -> None:
    # isSchedulableAfterClaimChange: Semantic.DeepEqual of the whole status, so a
    # driver's status.devices conditions alone requeue the pod; a finalizer does not.
    raw = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    raw["metadata"]["uid"] = "u1"
    w = World(claims=(raw,))
    pod = claim_pod()
    before = decode_resource_claim(raw)
    conditions = copy.deepcopy(raw)
    conditions["status"] = {
        "devices": [
            {
                "driver": GPU,
                "pool": "n1",
                "device": "g",
                "conditions": [{"type": "Ready", "status": "True"}],
            }
        ]
    }
    finalized = copy.deepcopy(raw)
    finalized["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    hint = w.plugin.hints.claim_changed
    assert hint(pod, before, decode_resource_claim(conditions)) is QueueingHint.QUEUE
    assert hint(pod, before, decode_resource_claim(finalized)) is QueueingHint.QUEUE_SKIP


def test_pod_update_hint() -> None:
    w = World(claims=(dra.resource_claim("gen", dra.device_request("gpu", "gpu")),))
    waiting = make_pod("p").resource_claim("gpu", template="t")
    assert w.plugin.hints.pod_updated(waiting.obj(), None, waiting.obj()) is QueueingHint.QUEUE_SKIP
    done = make_pod("p").resource_claim("gpu", template="t").claim_status("gpu", None).obj()
    assert w.plugin.hints.pod_updated(done, None, done) is QueueingHint.QUEUE


def test_decode_errors_name_the_field() -> None:
    bad = dra.resource_slice("s", "n1", [{"name": "d", "capacity": {"m": {"value": "lots"}}}])
    with pytest.raises(DecodeError) as exc:
        decode_resource_slice(bad)
    assert (exc.value.kind, exc.value.key) == ("ResourceSlice", "s")
    bad_claim = dra.resource_claim("c", dra.device_request("gpu", "gpu", count=2))
    bad_claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    with pytest.raises(DecodeError) as exc2:
        decode_resource_claim(bad_claim)
    assert exc2.value.field == "spec.devices.requests[0].exactly.count"


def _first_available(*subs: tuple[str, str]) -> dict[str, Any]:
    """A request whose alternatives are (name, CEL selector on the model) of class gpu."""
    return {
        "name": "gpu",
        "firstAvailable": [
            {"name": n, "deviceClassName": "gpu", "selectors": [{"cel": {"expression": e}}]}
            for n, e in subs
        ],
    }


def test_first_available_takes_the_first_alternative_that_fits_and_scores_it() -> None:
    model = 'device.attributes["gpu.example.com"].model == "{}"'
    req = _first_available(("h100", model.format("h100")), ("a100", model.format("a100")))
    w = World(
        claims=(dra.resource_claim("c", req),),
        slices=(gpu_slice("n1", gpu("gpu-0", "a100")), gpu_slice("n2", gpu("gpu-0", "h100"))),
    )
    pod = claim_pod()
    state, pre, results = w.filter_all(pod)
    assert pre is None
    assert fits(results) == ["n1", "n2"]
    assert w.plugin.pre_score(state, pod, w.nodes) is None
    # Go's computeScore: FirstAvailableDeviceRequestMaxSize (8) minus the alternative's index.
    assert [w.plugin.score(state, pod, ni) for ni in w.nodes] == [7, 8]
    assert w.plugin.reserve(state, pod, "n2") is None
    (allocation,) = state.read(STATE_KEY).reserved.values()
    assert [r.request for r in allocation.results] == ["gpu/h100"]


def test_pre_score_skips_pods_without_first_available() -> None:
    w = World(
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n1", gpu("gpu-0")),),
    )
    pod = claim_pod()
    state, _, _ = w.filter_all(pod)
    st = w.plugin.pre_score(state, pod, w.nodes)
    assert st is not None
    assert st.code == Code.SKIP


MODEL = "gpu.example.com/model"


def _constrained(*requests: dict[str, Any], **constraint: Any) -> dict[str, Any]:
    claim = dra.resource_claim("c", *requests)
    claim["spec"]["devices"]["constraints"] = [{"matchAttribute": MODEL, **constraint}]
    return claim


@pytest.mark.parametrize(
    ("claim", "node_devices", "fits_"),
    [
        pytest.param(
            _constrained(dra.device_request("gpu", "gpu", count=2)),
            [gpu("g0", "a100"), gpu("g1", "h100")],
            False,
            id="two-models",
        ),
        pytest.param(
            _constrained(dra.device_request("gpu", "gpu", count=2)),
            # The first device fixes h100; the search backtracks to the a100 pair.
            [gpu("g0", "h100"), gpu("g1", "a100"), gpu("g2", "a100")],
            True,
            id="backtracks-to-a-matching-pair",
        ),
        pytest.param(
            _constrained(dra.device_request("gpu", "gpu", count=2)),
            [gpu("g0", "a100"), dra.device("g1")],
            False,
            id="attribute-missing",
        ),
        pytest.param(
            _constrained(
                dra.device_request("a", "gpu"), dra.device_request("b", "gpu"), requests=["a", "b"]
            ),
            [gpu("g0", "a100"), gpu("g1", "h100")],
            False,
            id="named-requests",
        ),
        pytest.param(
            _constrained(
                dra.device_request("a", "gpu"), dra.device_request("b", "gpu"), requests=["a"]
            ),
            [gpu("g0", "a100"), gpu("g1", "h100")],
            True,
            id="other-request-unconstrained",
        ),
        pytest.param(
            _constrained(
                dra.device_request("gpu", "gpu"),
                _first_available(("any", "true")),
                requests=["gpu", "gpu/any"],
            ),
            [gpu("g0", "a100"), gpu("g1", "h100")],
            False,
            id="subrequest-named",
        ),
    ],
)
def test_match_attribute_constraint(
    claim: dict[str, Any], node_devices: list[dict[str, Any]], fits_: bool
) -> None:
    w = World(claims=(claim,), slices=(gpu_slice("n1", *node_devices),))
    _, pre, results = w.filter_all(claim_pod())
    assert pre is None
    assert fits(results) == (["n1"] if fits_ else [])
    if not fits_:
        st = results["n1"]
        assert st is not None
        assert st.message() == "cannot allocate all claims"


def test_match_attribute_picks_devices_that_agree() -> None:
    claim = _constrained(dra.device_request("gpu", "gpu", count=2))
    w = World(
        claims=(claim,),
        slices=(gpu_slice("n1", gpu("g0", "h100"), gpu("g1", "a100"), gpu("g2", "a100")),),
    )
    pod = claim_pod()
    state, _, _ = w.filter_all(pod)
    assert w.plugin.reserve(state, pod, "n1") is None
    (allocation,) = state.read(STATE_KEY).reserved.values()
    assert [r.device for r in allocation.results] == ["g1", "g2"]


def test_a_version_never_matches_a_string() -> None:
    devices = [
        {"name": "g0", "attributes": {"model": {"version": "1.0.0"}}},
        {"name": "g1", "attributes": {"model": {"string": "1.0.0"}}},
        {"name": "g2", "attributes": {"model": {"version": "1.0.0"}}},
    ]
    claim = _constrained(dra.device_request("gpu", "gpu", count=2))
    w = World(claims=(claim,), slices=(gpu_slice("n1", *devices),))
    pod = claim_pod()
    state, _, results = w.filter_all(pod)
    assert fits(results) == ["n1"]
    assert w.plugin.reserve(state, pod, "n1") is None
    (allocation,) = state.read(STATE_KEY).reserved.values()
    assert [r.device for r in allocation.results] == ["g0", "g2"]


def test_all_mode_refused_by_a_constraint_is_go_error() -> None:
    claim = _constrained(dra.device_request("gpu", "gpu", mode="All"))
    w = World(claims=(claim,), slices=(gpu_slice("n1", gpu("g0", "a100"), gpu("g1", "h100")),))
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert (st.code, st.message()) == (
        Code.ERROR,
        "claim default/c, request gpu: cannot add device gpu.example.com/n1/g1 because a "
        "claim constraint would not be satisfied",
    )


def test_constraint_without_match_attribute_is_an_error() -> None:
    claim = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    claim["spec"]["devices"]["constraints"] = [{"requests": ["gpu"]}]
    w = World(claims=(claim,), slices=(gpu_slice("n1", gpu("g0")),))
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert (st.code, st.message()) == (
        Code.ERROR,
        "claim default/c, constraint #0: empty constraint (unsupported constraint type?)",
    )


def _runner_objects(
    classes: tuple[dict[str, Any], ...],
    claims: tuple[dict[str, Any], ...],
    slices: tuple[dict[str, Any], ...],
) -> dict[str, list[Any]]:
    for i, c in enumerate(claims):
        c["metadata"].setdefault("uid", f"claim-{i}")
    return {
        RESOURCE_CLAIMS.resource: [decode_resource_claim(c) for c in claims],
        DEVICE_CLASSES.resource: [decode_device_class(c) for c in classes],
        RESOURCE_SLICES.resource: [decode_resource_slice(s) for s in slices],
    }


async def test_cel_compile_error_reaches_the_cycle_as_go_words_it() -> None:
    """Through the real framework: the Filter error carries the runtime's prefix, then
    the allocator's words naming the class (what the pod's FailedScheduling event says)."""
    runner = Runner(
        ["DynamicResources"],
        nodes=[make_node("n1").obj()],
        objects=_runner_objects(
            (dra.device_class("gpu", "device.driver =="),),
            (dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
            (gpu_slice("n1", gpu("gpu-0")),),
        ),
    )
    result = await runner.schedule(claim_pod())
    assert result.error is not None
    assert result.error.message().startswith(
        'running "DynamicResources" filter plugin: class gpu: selector #0: CEL compile '
        "error: compilation failed: ERROR: <input>:1:"
    )


async def test_first_available_score_is_weighted_by_the_default_weight() -> None:
    model = 'device.attributes["gpu.example.com"].model == "{}"'
    req = _first_available(("h100", model.format("h100")), ("a100", model.format("a100")))
    runner = Runner(
        [enable(SPEC, weight=2)],
        nodes=[make_node("n1").obj(), make_node("n2").obj()],
        objects=_runner_objects(
            (dra.device_class("gpu"),),
            (dra.resource_claim("c", req),),
            (gpu_slice("n1", gpu("gpu-0", "a100")), gpu_slice("n2", gpu("gpu-0", "h100"))),
        ),
    )
    result = await runner.schedule(claim_pod())
    scores = result.scores["DynamicResources"]
    assert scores.raw == {"n1": 7, "n2": 8}
    assert scores.normalized == {"n1": 87, "n2": 100}
    assert result.selected == "n2"


def _allocator(*slices: dict[str, Any]) -> Allocator:
    cls = decode_device_class(dra.device_class("gpu"))
    return Allocator({"gpu": cls}.get, AllocatedState(), [decode_resource_slice(s) for s in slices])


def test_incomplete_pool_is_skipped_and_fails_all_mode() -> None:
    half = dra.resource_slice("n1-a", "n1", [dra.device("gpu-0")], slice_count=2)
    one = decode_resource_claim(dra.resource_claim("c", dra.device_request("gpu", "gpu")))
    assert _allocator(half).allocate("n1", {}, [one]) is None
    every = decode_resource_claim(
        dra.resource_claim("c", dra.device_request("gpu", "gpu", mode="All"))
    )
    with pytest.raises(
        AllocationError, match=r"resource pool gpu\.example\.com/n1 is currently being updated"
    ):
        _allocator(half).allocate("n1", {}, [every])
    other_half = dra.resource_slice("n1-b", "n1", [dra.device("gpu-1")], slice_count=2)
    result = _allocator(half, other_half).allocate("n1", {}, [every])
    assert result is not None
    assert [r.device for r in result[0].results] == ["gpu-0", "gpu-1"]


def test_all_nodes_slice_allocation_has_no_node() -> None:
    shared = dra.resource_slice("net", "", [dra.device("vlan-0")], pool="fabric")
    del shared["spec"]["nodeName"]
    shared["spec"]["allNodes"] = True
    claim = decode_resource_claim(dra.resource_claim("c", dra.device_request("gpu", "gpu")))
    result = _allocator(shared).allocate("n7", {}, [claim])
    assert result is not None
    assert (result[0].node_name, result[0].results[0].device) == ("", "vlan-0")


def test_older_pool_generation_is_ignored() -> None:
    old = dra.resource_slice("n1-old", "n1", [dra.device("gone")], generation=1)
    new = dra.resource_slice("n1-new", "n1", [dra.device("gpu-0")], generation=2)
    claim = decode_resource_claim(dra.resource_claim("c", dra.device_request("gpu", "gpu")))
    result = _allocator(old, new).allocate("n1", {}, [claim])
    assert result is not None
    assert result[0].results[0].device == "gpu-0"


def _one_claim(mode: str | None = None) -> list[ResourceClaim]:
    return [
        decode_resource_claim(dra.resource_claim("c", dra.device_request("gpu", "gpu", mode=mode)))
    ]


def test_an_older_complete_generation_on_the_node_is_used_as_go_does() -> None:
    """GatherPools takes the node's slices at their newest generation; complete by
    resourceSliceCount, the pool is used even though the driver published a newer
    generation for another node."""
    old = dra.resource_slice("p-n1", "n1", [dra.device("gpu-0")], pool="p", generation=1)
    new = dra.resource_slice("p-n2", "n2", [dra.device("gpu-9")], pool="p", generation=2)
    result = _allocator(old, new).allocate("n1", {}, _one_claim())
    assert result is not None
    assert result[0].results[0].device == "gpu-0"


def test_an_incomplete_older_generation_is_obsolete() -> None:
    """Part of generation 1 on the node, generation 2 elsewhere (checkSlicesInPool): the
    pool is left out, so even All mode does not call it "being updated"."""
    old = dra.resource_slice("p-n1", "n1", [dra.device("gpu-0")], pool="p", slice_count=2)
    new = dra.resource_slice("p-n2", "n2", [dra.device("gpu-9")], pool="p", generation=2)
    assert _allocator(old, new).allocate("n1", {}, _one_claim()) is None
    assert _allocator(old, new).allocate("n1", {}, _one_claim("All")) is None


def test_a_pool_split_across_nodes_is_complete_when_the_cluster_has_every_slice() -> None:
    mine = dra.resource_slice("p-n1", "n1", [dra.device("gpu-0")], pool="p", slice_count=2)
    theirs = dra.resource_slice("p-n2", "n2", [dra.device("gpu-1")], pool="p", slice_count=2)
    result = _allocator(mine, theirs).allocate("n1", {}, _one_claim("All"))
    assert result is not None
    assert [r.device for r in result[0].results] == ["gpu-0"]


def test_invalid_pool_offers_nothing_and_says_so() -> None:
    """validateDeviceNames: a device name twice in the node's slices of one pool makes the
    pool invalid; the node then fails with Go's reason, or All mode with Go's error."""
    a = dra.resource_slice("p-a", "n1", [dra.device("gpu-0")], pool="p", slice_count=2)
    b = dra.resource_slice("p-b", "n1", [dra.device("gpu-0")], pool="p", slice_count=2)
    with pytest.raises(NodeAllocationFailure, match=r"^invalid resource pools were encountered$"):
        _allocator(a, b).allocate("n1", {}, _one_claim())
    with pytest.raises(
        AllocationError, match=r"resource pool gpu\.example\.com/p is currently invalid"
    ):
        _allocator(a, b).allocate("n1", {}, _one_claim("All"))
    # Another, valid pool on the node still serves the claim.
    good = dra.resource_slice("q", "n1", [dra.device("gpu-5")], pool="q")
    result = _allocator(a, b, good).allocate("n1", {}, _one_claim())
    assert result is not None
    assert result[0].results[0].device == "gpu-5"


def test_invalid_pool_is_the_filter_reason() -> None:
    a = dra.resource_slice("p-a", "n1", [gpu("gpu-0")], pool="p", slice_count=2)
    b = dra.resource_slice("p-b", "n1", [gpu("gpu-0")], pool="p", slice_count=2)
    w = World(claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),), slices=(a, b))
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "invalid resource pools were encountered",
    )


def test_cel_answers_are_cached_by_device_content_and_type() -> None:
    """A bool attribute and an int one compare equal in Python (True == 1), not in CEL
    (cel-go refuses int == bool; this runtime answers false)."""
    as_bool = Device("d0", {"gpu.example.com/x": True})
    as_int = Device("d1", {"gpu.example.com/x": 1})
    expr = compile_expression('device.attributes["gpu.example.com"].x == true')
    assert expr.matches(as_bool, GPU) is True
    assert expr.matches(as_int, GPU) is False


# ---- PostFilter ------------------------------------------------------------------------


def _held(claim: dict[str, Any], *pod_uids: str) -> dict[str, Any]:
    claim["status"]["reservedFor"] = [
        {"resource": "pods", "name": f"pod-{u}", "uid": u} for u in pod_uids
    ]
    return claim


def _allocated_elsewhere(*holders: str) -> dict[str, Any]:
    """A claim allocated on a node no longer in the cluster: no node can use it."""
    claim = allocated(dra.resource_claim("c", dra.device_request("gpu", "gpu")), "gone", "gpu-0")
    return _held(claim, *holders) if holders else claim


async def _post_filter(w: World, pod: Pod) -> Status | None:
    state, pre, _ = w.filter_all(pod)
    assert pre is None
    result, st = await w.plugin.post_filter(state, pod, NodeToStatus())
    assert result is None
    return st


@pytest.mark.parametrize(
    "holders",
    [pytest.param((), id="reserved-for-nobody"), pytest.param(("pod-uid",), id="only-this-pod")],
)
async def test_post_filter_deallocates_a_claim_no_node_can_use(holders: tuple[str, ...]) -> None:
    w = World(claims=(_allocated_elsewhere(*holders),), slices=(gpu_slice("n1", gpu("gpu-0")),))
    st = await _post_filter(w, make_pod("p").uid("pod-uid").resource_claim("gpu", claim="c").obj())
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE,
        "deallocation of ResourceClaim completed",
    )
    ((path, body),) = w.client.patches
    assert path.endswith("/namespaces/default/resourceclaims/c/status")
    # At the version the decision was made on, so a claim changed meanwhile is not touched.
    assert body == {
        "metadata": {"resourceVersion": "5"},
        "status": {"reservedFor": None, "allocation": None, "devices": None},
    }


async def test_post_filter_leaves_a_claim_another_pod_holds() -> None:
    w = World(claims=(_allocated_elsewhere("other", "pod-uid"),))
    st = await _post_filter(w, make_pod("p").uid("pod-uid").resource_claim("gpu", claim="c").obj())
    assert st is not None
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ())
    assert w.client.patches == []


class Refusing(RecordingClient):
    """Every request fails with `error`."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        raise self.error


CLAIM_WRITE_FAILURES = [
    pytest.param(
        ApiError(409, "Conflict", 'resourceclaims "c": the object has been modified'), id="409"
    ),
    pytest.param(TransportError("PATCH c: connection closed"), id="transport"),
]


@pytest.mark.parametrize("failure", CLAIM_WRITE_FAILURES)
async def test_post_filter_lets_a_failed_deallocation_reach_the_framework(
    failure: Exception,
) -> None:
    # The framework's PostFilter runner classifies it (kind, count, one warning) and returns
    # Go's statusError with the error's text; the plugin catches nothing itself.
    w = World(claims=(_allocated_elsewhere(),))
    w.handle._client = Refusing(failure)
    with pytest.raises(type(failure)) as raised:
        await _post_filter(w, claim_pod())
    assert raised.value is failure
    assert failure_message(failure) == (
        failure.message if isinstance(failure, ApiError) else str(failure)
    )


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(TransportError("PATCH c: connection refused"), id="transport"),
        pytest.param(ApiError(422, "Invalid", "bad allocation"), id="invalid"),
    ],
)
async def test_pre_bind_lets_a_failed_claim_write_reach_the_framework_in_gos_words(
    failure: Exception,
) -> None:
    # Whatever the kind (no answer, or an answer other than a conflict), the failure
    # propagates for the framework to classify, carrying what bindClaim was writing as
    # Go's fmt.Errorf wraps it.
    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    w.handle._client = Refusing(failure)
    with pytest.raises(type(failure)) as raised:
        await w.plugin.pre_bind(state, pod, "n1")
    assert raised.value is failure
    text = failure.message if isinstance(failure, ApiError) else str(failure)
    assert failure_message(raised.value) in (
        f"add finalizer to claim default/c: {text}",
        f"add allocation and reservation to claim default/c: {text}",
    )


class LosingStatusAnswers(RecordingClient):
    """A server that applies the claim's status writes, then loses their answers with
    `failure`, and answers GETs with the claim as stored, as `change` leaves it."""

    def __init__(self, failure: Exception, change: Callable[[dict[str, Any]], object]) -> None:
        super().__init__()
        self.failure = failure
        self.change = change
        self.stored: dict[str, Any] = {}
        self.gets = 0

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        if method == "GET":
            self.gets += 1
            return self.stored
        answer = await super().request(method, path, **kw)
        if not path.endswith("/status"):
            return answer
        answer["metadata"]["uid"] = "claim-0"
        self.stored = answer
        self.change(answer)
        raise self.failure


LOST_ANSWERS = [
    pytest.param(TransportError("closed before the answer was complete", broken=True), id="cut"),
    pytest.param(TransportError("no answer in 60s", timeout=True), id="timeout"),
    pytest.param(ApiError(504, "Timeout", "etcd took too long"), id="504"),
]


@pytest.mark.parametrize("failure", LOST_ANSWERS)
async def test_a_claim_write_whose_answer_was_lost_but_landed_is_kept(failure: Exception) -> None:
    """The allocation was written though its answer never came: PreBind reads the claim
    back and carries on with it, so Unreserve never frees its device while the claims
    watch has not brought the allocation (Go's Unreserve would)."""
    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    server = LosingStatusAnswers(failure, lambda claim: None)
    w.handle._client = server
    with structlog.testing.capture_logs() as logs:
        assert await w.plugin.pre_bind(state, pod, "n1") is None
    assert server.gets == 1
    assert [(e["claim"], e["landed"]) for e in logs if e["event"] == "claim_checked"] == [
        ("default/c", True)
    ]
    assert w.plugin.tracker.pending_allocation("claim-0") is None
    assert ("gpu.example.com", "n1", "gpu-0") in w.plugin.tracker.allocated_state().devices
    w.plugin.unreserve(state, pod, "n1")  # were binding to fail now, the claim stays held
    assert ("gpu.example.com", "n1", "gpu-0") in w.plugin.tracker.allocated_state().devices


def _not_applied(claim: dict[str, Any]) -> None:
    claim["status"] = {}


def _other_consumer(claim: dict[str, Any]) -> None:
    claim["status"]["reservedFor"] = [{"resource": "pods", "name": "q", "uid": "q-uid"}]


def _other_device(claim: dict[str, Any]) -> None:
    claim["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"


def _recreated(claim: dict[str, Any]) -> None:
    claim["metadata"]["uid"] = "claim-1"


@pytest.mark.parametrize("failure", LOST_ANSWERS)
@pytest.mark.parametrize("change", [_not_applied, _other_consumer, _other_device, _recreated])
async def test_a_claim_write_whose_answer_was_lost_and_did_not_land_fails_as_before(
    failure: Exception, change: Callable[[dict[str, Any]], object]
) -> None:
    """The stored claim is not what this write made: the failure stands, in Go's words,
    and Unreserve takes the allocation back."""
    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    w.handle._client = LosingStatusAnswers(failure, change)
    with structlog.testing.capture_logs() as logs, pytest.raises(type(failure)) as raised:
        await w.plugin.pre_bind(state, pod, "n1")
    assert raised.value is failure
    assert [e["landed"] for e in logs if e["event"] == "claim_checked"] == [False]
    w.plugin.unreserve(state, pod, "n1")
    assert w.plugin.tracker.pending_allocation("claim-0") is None
    assert ("gpu.example.com", "n1", "gpu-0") not in w.plugin.tracker.allocated_state().devices


async def test_pre_bind_retries_a_conflict_on_the_claim_as_stored() -> None:
    # RetryOnConflict: a 409 is tried again after a GET of the claim; here the GET fails
    # too, and that failure propagates with Go's words for it.
    message = 'resourceclaims "c": the object has been modified'

    class Conflicting(RecordingClient):
        async def request(self, method: str, path: str, **kw: Any) -> Any:
            self.patches.append((f"{method} {path}", kw.get("body")))
            raise ApiError(409, "Conflict", message)  # a new answer each time

    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    client = Conflicting()
    w.handle._client = client
    with pytest.raises(ApiError) as raised:
        await w.plugin.pre_bind(state, pod, "n1")
    assert failure_message(raised.value) == (
        f"get updated claim default/c after conflict: {message}"
    )
    assert [call.split(" ")[0] for call, _ in client.patches] == ["PATCH", "GET"]


async def test_post_filter_of_a_pod_without_claims_has_nothing_to_say() -> None:
    w = World()
    state = CycleState()
    w.plugin.pre_filter(state, make_pod("p").obj(), w.nodes)
    _, st = await w.plugin.post_filter(state, make_pod("p").obj(), NodeToStatus())
    assert st is not None
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, ())


async def test_post_filter_without_pre_filter_state_ends_the_run_as_go_not_found() -> None:
    """An earlier PreFilter plugin rejected the pod, so DynamicResources' PreFilter never
    ran: Go's PostFilter fails with fwk.ErrNotFound, RunPostFilterPlugins stops there
    (DefaultPreemption does not run) and the FailedScheduling message ends in "not found"."""
    runner = Runner(["DynamicResources", "DefaultPreemption"], nodes=[make_node("n1").obj()])
    pod = make_pod("p").obj()
    result, st = await runner.framework.run_post_filter(CycleState(), pod, NodeToStatus())
    assert result is None
    assert st is not None
    assert (st.code, st.message(), st.plugin) == (Code.ERROR, "not found", "DynamicResources")


# ---- Unreserve -------------------------------------------------------------------------


async def test_unreserve_after_pre_bind_takes_the_pod_out_of_reserved_for() -> None:
    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    assert await w.plugin.pre_bind(state, pod, "n1") is None
    written = len(w.client.patches)
    w.plugin.unreserve(state, pod, "n1")
    w.plugin.unreserve(state, pod, "n1")  # idempotent: the write is queued once
    await w.plugin.releaser.flush()
    ((path, body),) = w.client.patches[written:]
    assert path.endswith("/namespaces/default/resourceclaims/c/status")
    # Go's strategic-merge delete of the pod's entry; the allocation stays.
    assert body == {
        "metadata": {"uid": "claim-0"},
        "status": {"reservedFor": [{"$patch": "delete", "uid": pod.uid}]},
    }


async def test_unreserve_before_pre_bind_writes_nothing() -> None:
    w = one_gpu()
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    w.plugin.unreserve(state, pod, "n1")
    await w.plugin.releaser.flush()
    assert w.client.patches == []
    assert w.plugin.tracker.pending_allocation("claim-0") is None


async def test_unreserve_write_failure_is_logged_not_raised() -> None:
    class Failing(RecordingClient):
        async def request(self, method: str, path: str, **kw: Any) -> Any:
            self.patches.append((path, kw["body"]))
            raise ApiError(500, "InternalError", "etcd is sad")

    claim = allocated(dra.resource_claim("c", dra.device_request("gpu", "gpu")), "n1", "gpu-0")
    pod = make_pod("p").uid("pod-uid").resource_claim("gpu", claim="c").obj()
    w = World(claims=(_held(claim, "pod-uid"),), slices=(gpu_slice("n1", gpu("gpu-0")),))
    failing = Failing()
    w.plugin.releaser = ReservationReleaser(failing)
    state, _, _ = w.filter_all(pod)
    # A claim reserved for the pod by an earlier attempt is withdrawn as well.
    w.plugin.unreserve(state, pod, "n1")
    await w.plugin.releaser.flush()
    assert len(failing.patches) == 1
    assert w.plugin.releaser.pending == {}


@pytest.mark.parametrize(
    ("failure", "warned"),
    [
        pytest.param(ApiError(409, "Conflict", "uid"), False, id="conflict-claim-recreated"),
        pytest.param(ApiError(404, "NotFound", "gone"), False, id="not-found"),
        pytest.param(ApiError(500, "InternalError", "etcd"), True, id="server-error"),
        pytest.param(ApiError(422, "Invalid", "bad"), True, id="invalid"),
        pytest.param(TransportError("PATCH c: reset", broken=True), True, id="transport"),
        pytest.param(ConnectionResetError("reset"), True, id="unwrapped-oserror"),
    ],
)
async def test_an_unreserve_write_failure_is_dropped_and_logged_by_its_kind(
    failure: Exception, warned: bool
) -> None:
    claim = allocated(dra.resource_claim("c", dra.device_request("gpu", "gpu")), "n1", "gpu-0")
    pod = make_pod("p").uid("pod-uid").resource_claim("gpu", claim="c").obj()
    releaser = ReservationReleaser(Refusing(failure))
    releaser.put(decode_resource_claim(_held(claim, "pod-uid")), pod)
    with structlog.testing.capture_logs() as logs:
        await releaser.flush()
    assert releaser.pending == {}
    lines = [r for r in logs if r["event"] == "claim_unreserve_failed"]
    assert [(r["log_level"], r["kind"]) for r in lines] == (
        [("warning", failure_kind(failure))] if warned else []
    )


# ---- CEL runtime errors in cel-go's words -----------------------------------------------

_ATTRS = 'device.attributes["gpu.example.com"]'


@pytest.mark.parametrize(
    ("expression", "go"),
    [
        # What Go's CompilationResult.DeviceMatches (cel-go v0.29.2) answers for a device
        # with model "a100" and cores 8, run against the same expressions.
        (f"{_ATTRS}.model < 1", "no such overload"),
        (f'{_ATTRS}.cores > "a"', "no such overload"),
        (f"{_ATTRS}.model + 1 == 2", "no such overload"),
        (f"{_ATTRS}.cores / 0 == 1", "division by zero"),
        (f"{_ATTRS}.cores % 0 == 1", "modulus by zero"),
        (f"{_ATTRS}.cores + 9223372036854775807 > 0", "integer overflow"),
        (f"int({_ATTRS}.model) == 1", "type conversion error from 'string' to 'int'"),
        (
            f"{_ATTRS}.cores",
            "CEL result of type int could not be converted to bool: unsupported type "
            "conversion from 'int' to bool",
        ),
        (
            f"{_ATTRS}.model",
            "CEL result of type string could not be converted to bool: unsupported native "
            "conversion from string to 'bool'",
        ),
    ],
)
def test_cel_runtime_errors_read_as_cel_go(expression: str, go: str) -> None:
    device = Device("g", {"gpu.example.com/model": "a100", "gpu.example.com/cores": 8})
    with pytest.raises(CelRuntimeError) as exc:
        compile_expression(expression).evaluate(device, GPU)
    assert str(exc.value) == go


@pytest.mark.parametrize(
    "expression",
    [f"{_ATTRS}.model == 1", f"{_ATTRS}.cores == true", f'{_ATTRS}.cores == "8"'],
)
def test_cel_equality_across_types_is_false_as_in_cel_go(expression: str) -> None:
    device = Device("g", {"gpu.example.com/model": "a100", "gpu.example.com/cores": 8})
    assert compile_expression(expression).evaluate(device, GPU) is False


_FW = 'device.attributes["gpu.example.com"].fw'


@pytest.mark.parametrize(
    ("expression", "go"),
    [
        # Go's answers (DeviceMatches, cel-go v0.29.2, apiserver's semver library) for a
        # device whose version attribute fw is 1.2.3 and string attribute model is a100.
        (f'{_FW}.isGreaterThan(semver("1.0.0"))', True),
        (f'{_FW}.compareTo(semver("1.2.3")) == 0', True),
        (f"{_FW}.major() == 1", True),
        (f'{_FW} == semver("1.2.3")', True),
        ('semver("1.2.3+b1") == semver("1.2.3+b2")', True),
        ('isSemver("1.2.3-rc.1+b")', True),
        ('isSemver("v1.2", true)', True),
        ('semver("v1.2", true).minor() == 2', True),
        ('semver("1.2.3", true) == semver("v1.2.3", true)', True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),
        ('semver("1.0.0-2").isLessThan(semver("1.0.0-10"))', True),
        ('semver("1.2") == semver("1.2.0")', "No Major.Minor.Patch elements found"),
        ('semver("01.2.3").major() == 1', 'Major number must not contain leading zeroes "01"'),
        (
            'semver("1.2.3-01").major() == 1',
            'Numeric PreRelease version must not contain leading zeroes "01"',
        ),
        ('semver("1.2.3-a.").major() == 1', "Prerelease is empty"),
        ('semver("v1.2.3").major() == 1', 'Invalid character(s) found in major number "v1"'),
        (
            'semver("1.2-rc", true).major() == 1',
            "short version cannot contain PreRelease/Build meta data",
        ),
        (
            'device.attributes["gpu.example.com"].model.major() == 1',
            "no such overload: major(string)",
        ),
        (
            _FW,
            "CEL result of type kubernetes.Semver could not be converted to bool: type "
            "conversion error from 'Semver' to 'bool'",
        ),
    ],
)
def test_cel_semver_library_as_go(expression: str, go: bool | str) -> None:
    device = decode_resource_slice(
        dra.resource_slice(
            "s",
            "n1",
            [
                {
                    "name": "g",
                    "attributes": {"fw": {"version": "1.2.3"}, "model": {"string": "a100"}},
                }
            ],
        )
    ).devices[0]
    compiled = compile_expression(expression)
    if isinstance(go, bool):
        assert compiled.matches(device, GPU) is go
        return
    with pytest.raises(CelRuntimeError) as exc:
        compiled.matches(device, GPU)
    assert str(exc.value) == go


def test_a_version_is_never_equal_to_a_string() -> None:
    """Go: "no such overload" (a Semver against a string); asched: false, the closest a
    plain-value CEL runtime gets. Either way the device is not selected."""
    device = Device(
        "g", {"gpu.example.com/fw": "1.2.3"}, versions=frozenset({"gpu.example.com/fw"})
    )
    assert compile_expression(f'{_FW} == "1.2.3"').evaluate(device, GPU) is False


# ---- device taints (DeviceTaints, GA in 1.37) -----------------------------------------
def _tainted(name: str, effect: str, key: str = "dead", value: str = "yes") -> dict[str, Any]:
    device = gpu(name)
    device["taints"] = [{"key": key, "value": value, "effect": effect}]
    return device


def _tolerating(*tolerations: dict[str, str], mode: str = "ExactCount") -> dict[str, Any]:
    claim = dra.resource_claim("c", dra.device_request("gpu", "gpu", mode=mode))
    claim["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = list(tolerations)
    return claim


@pytest.mark.parametrize(
    ("effect", "tolerations", "device"),
    [
        # taintPreventsAllocation: NoSchedule and NoExecute keep the device unless a
        # toleration matches (ToleratesTaint); None and unknown effects never do.
        pytest.param("NoSchedule", [], "g1", id="no-schedule-skipped"),
        pytest.param("NoExecute", [], "g1", id="no-execute-skipped"),
        pytest.param("None", [], "g0", id="none-ignored"),
        pytest.param("SomethingNew", [], "g0", id="unknown-effect-ignored"),
        pytest.param("NoSchedule", [{"key": "dead", "value": "yes"}], "g0", id="equal-by-default"),
        pytest.param("NoSchedule", [{"key": "dead", "value": "no"}], "g1", id="value-differs"),
        pytest.param("NoSchedule", [{"operator": "Exists"}], "g0", id="exists-any-key"),
        pytest.param(
            "NoSchedule",
            [{"key": "dead", "operator": "Exists", "effect": "NoExecute"}],
            "g1",
            id="effect-differs",
        ),
        pytest.param("NoSchedule", [{"key": "dead", "operator": "Gt"}], "g1", id="bad-operator"),
    ],
)
def test_a_device_taint_keeps_the_device_unless_tolerated(
    effect: str, tolerations: list[dict[str, str]], device: str
) -> None:
    claim = decode_resource_claim(_tolerating(*tolerations))
    node = gpu_slice("n1", _tainted("g0", effect), gpu("g1"))
    result = _allocator(node).allocate("n1", {}, [claim])
    assert result is not None
    assert [r.device for r in result[0].results] == [device]


def test_a_node_whose_only_device_is_tainted_cannot_allocate() -> None:
    w = World(claims=(_tolerating(),), slices=(gpu_slice("n1", _tainted("g0", "NoSchedule")),))
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "cannot allocate all claims",
    )


def test_all_mode_with_a_tainted_device_fails_without_an_error() -> None:
    # allocateDevice checks taints before constraints: an All request that needs a
    # tainted device is unsatisfiable on the node, not an error.
    w = World(
        claims=(_tolerating(mode="All"),),
        slices=(gpu_slice("n1", gpu("g0"), _tainted("g1", "NoExecute")),),
    )
    st = w.filter_all(claim_pod())[2]["n1"]
    assert st is not None
    assert (st.code, st.message()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "cannot allocate all claims",
    )


def test_a_toleration_in_a_first_available_alternative_applies_to_it_only() -> None:
    claim = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    claim["spec"]["devices"]["requests"] = [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "strict", "deviceClassName": "gpu"},
                {
                    "name": "lenient",
                    "deviceClassName": "gpu",
                    "tolerations": [{"operator": "Exists"}],
                },
            ],
        }
    ]
    node = gpu_slice("n1", _tainted("g0", "NoSchedule"))
    result = _allocator(node).allocate("n1", {}, [decode_resource_claim(claim)])
    assert result is not None
    assert [(r.request, r.device) for r in result[0].results] == [("gpu/lenient", "g0")]


def test_a_malformed_taint_names_its_field() -> None:
    node = gpu_slice("n1", gpu("g0"))
    node["spec"]["devices"][0]["taints"] = [{"key": "dead", "effect": 3}]
    with pytest.raises(DecodeError, match=r"spec\.devices\[0\]\.taints\[0\]\.effect"):
        decode_resource_slice(node)
