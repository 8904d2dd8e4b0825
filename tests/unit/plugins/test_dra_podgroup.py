"""DynamicResources and pod groups: claims shared through a PodGroup's spec.resourceClaims
(DRAWorkloadResourceClaims), allocations shared within one pod-group cycle, and PreBind's
write when a sibling got there first."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
import structlog.testing

from asched.api import Pod
from asched.api.dra import ConsumerRef, ResourceClaim, decode_resource_claim
from asched.api.workload import NativePodGroup, decode_native_podgroup
from asched.backend.queue import SchedulingQueue
from asched.base import featuregates
from asched.base.clock import FakeClock
from asched.client.protocol import ApiError, TransportError, failure_kind
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import PodGroupAssignments, PodGroupInfo
from asched.framework.status import Code, Status
from asched.framework.types import QueuedPodInfo
from asched.framework.workloads import NATIVE_POD_GROUPS
from asched.plugins.dynamicresources.binding import ClaimBindError, bind_claim
from asched.plugins.dynamicresources.claims import (
    ClaimLookupError,
    bindings,
    pod_claims,
    reserved_for_pod,
)
from asched.plugins.dynamicresources.state import STATE_KEY
from asched.plugins.dynamicresources.tracker import RESOURCE_CLAIMS, ClaimTracker
from asched.testing import dra
from asched.testing.builders import make_native_pod_group, make_pod
from asched.testing.fakes import FakeClient, filled_store
from tests.unit.plugins.test_dynamicresources import RecordingClient, World, gpu, gpu_slice

GROUP_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g"}


@pytest.fixture
def group_claims() -> Iterator[None]:
    """DRAWorkloadResourceClaims on for the plugins built inside the test."""
    featuregates.set_current({"DRAWorkloadResourceClaims": True})
    yield
    featuregates.set_current(featuregates.DEFAULTS)


def member(name: str, *entries: tuple[str, str]) -> Pod:
    b = make_pod(name).scheduling_group("g")
    for entry, claim in entries:
        b = b.resource_claim(entry, claim=claim)
    return b.obj()


def group(*entries: tuple[str, str]) -> NativePodGroup:
    b = make_native_pod_group("g").basic()
    for entry, claim in entries:
        b = b.resource_claim(entry, claim=claim)
    return b.obj()


# ---- resourceclaim.BindTo / IsReservedForPod / IsForPod -------------------------------
@pytest.mark.parametrize(
    ("pod_entries", "group_entries", "want"),
    [
        pytest.param([("gpu", "c")], [("gpu", "c")], ["podgroups"], id="same-entry"),
        pytest.param([("mine", "c")], [("gpu", "c")], ["pods"], id="other-entry-name"),
        pytest.param([("gpu", "d")], [("gpu", "c")], ["pods"], id="other-claim"),
        pytest.param(
            [("gpu", "c"), ("own", "d")], [("gpu", "c")], ["podgroups", "pods"], id="mixed"
        ),
    ],
)
def test_bind_to_the_group_only_for_the_same_entry(
    pod_entries: list[tuple[str, str]], group_entries: list[tuple[str, str]], want: list[str]
) -> None:
    pg = group(*group_entries)
    refs = bindings(member("p", *pod_entries), pg)
    assert [r.resource for r in refs] == want
    for r in refs:
        if r.resource == "podgroups":
            assert (r.api_group, r.name, r.uid) == ("scheduling.k8s.io", "g", pg.uid)


def test_bind_to_the_pod_without_a_group() -> None:
    pod = member("p", ("gpu", "c"))
    assert bindings(pod, None) == [ConsumerRef("pods", "p", pod.uid)]


def test_bind_to_refuses_a_group_entry_without_claim_or_template() -> None:
    raw = make_native_pod_group("g").basic().raw()
    raw["spec"]["resourceClaims"] = [{"name": "gpu"}]
    with pytest.raises(ClaimLookupError, match="PodGroup default/g claim gpu: none of the"):
        bindings(member("p", ("gpu", "c")), decode_native_podgroup(raw))


def claim_with(**status: Any) -> ResourceClaim:
    raw = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    raw["metadata"]["uid"] = "claim-uid"
    raw["status"] = status
    return decode_resource_claim(raw)


def test_a_reservation_for_the_group_counts_only_when_asked() -> None:
    pod = member("p", ("gpu", "c"))
    claim = claim_with(reservedFor=[GROUP_REF | {"uid": "pg-uid"}])
    assert reserved_for_pod(claim, pod, group=True)
    assert not reserved_for_pod(claim, pod)
    assert not reserved_for_pod(claim, make_pod("q").obj(), group=True)


def template_claim(owner_kind: str, owner_name: str, api_version: str) -> ResourceClaim:
    raw = dra.resource_claim("g-gpu-x", dra.device_request("gpu", "gpu"))
    raw["metadata"]["uid"] = "g-gpu-x-uid"
    raw["metadata"]["ownerReferences"] = [
        {
            "apiVersion": api_version,
            "kind": owner_kind,
            "name": owner_name,
            "uid": "owner-uid",
            "controller": True,
        }
    ]
    return decode_resource_claim(raw)


@pytest.mark.parametrize(
    ("owner", "group_claims_on", "error"),
    [
        pytest.param(("PodGroup", "g", "scheduling.k8s.io/v1beta1"), True, "", id="group-owns"),
        pytest.param(
            ("PodGroup", "g", "scheduling.k8s.io/v1beta1"),
            False,
            "(Pod is not owner)",
            id="gate-off",
        ),
        pytest.param(
            ("PodGroup", "other", "scheduling.k8s.io/v1beta1"),
            True,
            "(neither Pod nor PodGroup g is the owner)",
            id="another-group",
        ),
        pytest.param(
            ("PodGroup", "g", "scheduling.x-k8s.io/v1alpha1"),
            True,
            "(neither Pod nor PodGroup g is the owner)",
            id="another-api-group",
        ),
    ],
)
def test_a_claim_of_the_group_template_is_the_pods(
    owner: tuple[str, str, str], group_claims_on: bool, error: str
) -> None:
    pod = (
        make_pod("p")
        .scheduling_group("g")
        .resource_claim("gpu", template="t")
        .claim_status("gpu", "g-gpu-x")
        .obj()
    )
    claim = template_claim(*owner)

    def lookup() -> list[tuple[int, ResourceClaim]]:
        return pod_claims(pod, lambda ns, n: claim, group_claims=group_claims_on)

    if not error:
        assert [c.name for _, c in lookup()] == ["g-gpu-x"]
        return
    with pytest.raises(ClaimLookupError) as info:
        lookup()
    assert str(info.value) == (
        f"ResourceClaim default/g-gpu-x was not created for Pod default/p {error}"
    )


# ---- the plugin with the gate on ----------------------------------------------------------
def group_world(
    pg: NativePodGroup, *, devices: int = 1, c_status: dict[str, Any] | None = None
) -> World:
    c = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    if c_status is not None:
        c["status"] = c_status
    w = World(
        claims=(c, dra.resource_claim("d", dra.device_request("gpu", "gpu"))),
        slices=(gpu_slice("n1", *(gpu(f"gpu-{i}") for i in range(devices))),),
    )
    w.handle._stores[NATIVE_POD_GROUPS.resource] = filled_store([pg])
    return w


@pytest.mark.usefixtures("group_claims")
async def test_pre_bind_reserves_the_group_claim_for_the_group() -> None:
    pg = group(("shared", "c"))
    w = group_world(pg, devices=2)
    pod = member("p", ("shared", "c"), ("own", "d"))
    state, pre, results = w.filter_all(pod)
    assert pre is None
    assert results["n1"] is None
    assert w.plugin.reserve(state, pod, "n1") is None
    assert await w.plugin.pre_bind(state, pod, "n1") is None
    reserved = [
        body["status"]["reservedFor"] for path, body in w.client.patches if path.endswith("status")
    ]
    assert reserved == [
        [GROUP_REF | {"uid": pg.uid}],
        [{"resource": "pods", "name": "p", "uid": pod.uid}],
    ]


@pytest.mark.usefixtures("group_claims")
async def test_a_claim_reserved_for_the_group_needs_no_write() -> None:
    pg = group(("shared", "c"))
    result = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
    w = group_world(
        pg,
        c_status={
            "allocation": {"devices": {"results": [result]}},
            "reservedFor": [GROUP_REF | {"uid": pg.uid}],
        },
    )
    pod = member("p2", ("shared", "c"))
    state, pre, results = w.filter_all(pod)
    assert pre is None
    assert results == {"n1": None, "n2": None}
    assert w.plugin.reserve(state, pod, "n1") is None
    assert await w.plugin.pre_bind(state, pod, "n1") is None
    assert w.client.patches == []


@pytest.mark.usefixtures("group_claims")
def test_a_group_that_is_not_known_fails_pre_filter() -> None:
    w = group_world(group(("shared", "c")))
    w.handle._stores[NATIVE_POD_GROUPS.resource] = filled_store([])
    _, pre, _ = w.filter_all(member("p", ("shared", "c")))
    assert pre is not None
    assert pre.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pre.message() == "pod group object not found for pod group podgroup/default/g"


def test_gate_off_keeps_claims_the_pods() -> None:
    w = group_world(group(("shared", "c")))
    pod = member("p", ("shared", "c"))
    state, pre, _ = w.filter_all(pod)
    assert pre is None
    assert state.read(STATE_KEY).bindings == []


# ---- one pod-group cycle: siblings share an allocation in flight ------------------------
def in_group_cycle(group_cycle: CycleState) -> CycleState:
    state = CycleState()
    state.pod_group_cycle = group_cycle
    return state


def test_siblings_of_one_group_cycle_share_the_allocation_in_flight() -> None:
    """Go's podGroupStateData.pendingAllocations: p2 reuses the allocation p1's Reserve
    put in flight (only on p1's node) instead of waiting; Unreserve of both (a reverted
    placement) takes it out of flight only with the last sharer."""
    w = group_world(group())
    p1, p2 = member("p1", ("gpu", "c")), member("p2", ("gpu", "c"))
    cycle = CycleState()
    s1 = in_group_cycle(cycle)
    w.plugin.pre_filter(s1, p1, w.nodes)
    assert w.plugin.filter(s1, p1, w.nodes[0]) is None
    assert w.plugin.reserve(s1, p1, "n1") is None
    s2 = in_group_cycle(cycle)
    _, pre = w.plugin.pre_filter(s2, p2, w.nodes)
    assert pre is None
    assert w.plugin.filter(s2, p2, w.nodes[0]) is None
    st = w.plugin.filter(s2, p2, w.nodes[1])
    assert st is not None
    assert st.message() == "resourceclaim not available on the node"
    assert w.plugin.reserve(s2, p2, "n1") is None
    pending = w.plugin.tracker.pending_allocation("claim-0")
    assert pending is not None
    w.plugin.unreserve(s2, p2, "n1")
    assert w.plugin.tracker.pending_allocation("claim-0") is pending
    w.plugin.unreserve(s1, p1, "n1")
    assert w.plugin.tracker.pending_allocation("claim-0") is None


def test_outside_a_group_cycle_an_allocation_in_flight_makes_the_pod_wait() -> None:
    w = group_world(group())
    p1, p2 = member("p1", ("gpu", "c")), member("p2", ("gpu", "c"))
    s1, _, _ = w.filter_all(p1)
    assert w.plugin.reserve(s1, p1, "n1") is None
    _, pre, _ = w.filter_all(p2)
    assert pre is not None
    assert pre.message() == "resource claim default/c is in the process of being allocated"


def test_an_allocation_in_flight_leaves_with_its_last_sharer_or_when_written() -> None:
    tracker = ClaimTracker(lambda: filled_store([]))
    allocation = claim_with(allocation={"devices": {"results": []}}).allocation
    assert allocation is not None
    tracker.signal_pending("u", allocation)
    tracker.signal_pending("u", allocation)
    assert not tracker.remove_pending("u")
    tracker.signal_pending("u", allocation)
    assert tracker.remove_pending("u", force=True)
    assert tracker.pending_allocation("u") is None


# ---- bindClaim's retry on conflict ----------------------------------------------------------
class ConflictClient(FakeClient):
    """The claim changed since PreFilter: the first write conflicts; GET returns it as a
    sibling wrote it."""

    def __init__(self, now: dict[str, Any]) -> None:
        super().__init__()
        self.now = now
        self.calls: list[str] = []

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        self.calls.append(method)
        if method == "GET":
            return self.now
        if len(self.calls) == 1:
            raise ApiError(409, "Conflict", "the object has been modified", method, path)
        return self.now


def stale_and_current(**status: Any) -> tuple[ResourceClaim, dict[str, Any]]:
    raw = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    raw["metadata"] |= {"uid": "u", "resourceVersion": "5"}
    stale = decode_resource_claim(raw)
    now = raw | {"metadata": raw["metadata"] | {"resourceVersion": "8"}, "status": status}
    return stale, now


async def test_a_claim_a_sibling_allocated_meanwhile_fails_with_gos_words() -> None:
    stale, now = stale_and_current(
        allocation={"devices": {"results": []}}, reservedFor=[GROUP_REF | {"uid": "pg"}]
    )
    allocation = decode_resource_claim(now).allocation
    client = ConflictClient(now)
    with pytest.raises(ClaimBindError) as info:
        await bind_claim(client, stale, ConsumerRef("pods", "p", "pu"), allocation, 0.0)
    assert str(info.value) == "claim default/c got allocated elsewhere in the meantime"
    assert client.calls == ["PATCH", "GET"]


async def test_a_benign_conflict_is_retried_on_the_claim_as_it_is_now() -> None:
    stale, now = stale_and_current(
        allocation={"devices": {"results": []}},
        reservedFor=[{"resource": "pods", "name": "q", "uid": "qu"}],
    )
    stale = decode_resource_claim(now | {"metadata": now["metadata"] | {"resourceVersion": "5"}})
    client = ConflictClient(now)
    got = await bind_claim(client, stale, ConsumerRef("pods", "p", "pu"), None, 0.0)
    assert client.calls == ["PATCH", "GET", "PATCH"]
    assert got.name == "c"


# ---- PodGroupPostFilter ---------------------------------------------------------------------
def on_n2(pg: NativePodGroup, *also: dict[str, str]) -> dict[str, Any]:
    """Claim c allocated on n2 and reserved for the group (and `also`)."""
    result = {"request": "gpu", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}
    n2 = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
    return {
        "allocation": {
            "devices": {"results": [result]},
            "nodeSelector": {"nodeSelectorTerms": [n2]},
        },
        "reservedFor": [GROUP_REF | {"uid": pg.uid}, *also],
    }


def failed_group_cycle(w: World, *pods: Pod) -> CycleState:
    """Each member's PreFilter and Filter in one group cycle (c unusable on n1)."""
    cycle = CycleState()
    for pod in pods:
        state = in_group_cycle(cycle)
        _, pre = w.plugin.pre_filter(state, pod, w.nodes)
        assert pre is None
        for ni in w.nodes:
            w.plugin.filter(state, pod, ni)
    return cycle


class GroupView:
    """What the group cycle hands PodGroupPostFilter (PodGroupScheduling), as far as
    DynamicResources reads it."""

    def __init__(self, pg: NativePodGroup, state: CycleState, *pods: Pod) -> None:
        self.info = PodGroupInfo(pg, unscheduled=pods)
        self.state = state
        self.attempted = True

    def nodes(self) -> Sequence[NodeInfo]:
        return []

    async def place(self, removed: Sequence[Pod]) -> tuple[PodGroupAssignments, Status | None]:
        raise AssertionError("DynamicResources does not re-place the group")

    async def fits(self, assignments: Mapping[str, str], removed: Sequence[Pod]) -> bool:
        raise AssertionError("DynamicResources does not re-place the group")


async def group_post_filter(w: World, view: GroupView) -> Status:
    result, st = await w.plugin.pod_group_post_filter(view)
    assert result is None
    assert st is not None
    return st


def status_writes(w: World) -> list[dict[str, Any]]:
    return [body for path, body in w.client.patches if path.endswith("/resourceclaims/c/status")]


@pytest.mark.usefixtures("group_claims")
async def test_group_post_filter_deallocates_a_claim_held_by_the_group_alone() -> None:
    pg = group(("gpu", "c"))
    w = group_world(pg, c_status=on_n2(pg))
    p1 = member("p1", ("gpu", "c"))
    st = await group_post_filter(w, GroupView(pg, failed_group_cycle(w, p1), p1))
    assert st.code == Code.UNSCHEDULABLE
    assert st.message() == "deallocation of PodGroup ResourceClaim completed"
    assert status_writes(w) == [
        {
            "metadata": {"resourceVersion": "5"},
            "status": {"reservedFor": None, "allocation": None, "devices": None},
        }
    ]


@pytest.mark.usefixtures("group_claims")
async def test_group_post_filter_takes_the_group_out_of_a_claim_others_hold() -> None:
    pg = group(("gpu", "c"))
    other = {"resource": "pods", "name": "q", "uid": "q-uid"}
    w = group_world(pg, c_status=on_n2(pg, other))
    p1 = member("p1", ("gpu", "c"))
    st = await group_post_filter(w, GroupView(pg, failed_group_cycle(w, p1), p1))
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == "ResourceClaim unreserved for PodGroup"
    assert status_writes(w) == [
        {
            "metadata": {"uid": "claim-0"},
            "status": {"reservedFor": [{"$patch": "delete", "uid": pg.uid}]},
        }
    ]


class _Refusing(RecordingClient):
    """Records each write, then fails it with `error`."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        self.patches.append((path, kw.get("body")))
        raise self.error


@pytest.mark.usefixtures("group_claims")
async def test_a_failed_group_deallocation_reaches_the_framework() -> None:
    # Go's statusError: the framework's PostFilter runner classifies it by kind.
    pg = group(("gpu", "c"))
    w = group_world(pg, c_status=on_n2(pg))
    failure = ApiError(500, "InternalError", "etcd")
    w.handle._client = _Refusing(failure)
    p1 = member("p1", ("gpu", "c"))
    with pytest.raises(ApiError) as raised:
        await w.plugin.pod_group_post_filter(GroupView(pg, failed_group_cycle(w, p1), p1))
    assert raised.value is failure


@pytest.mark.usefixtures("group_claims")
@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(TransportError("PATCH c/status: connection closed"), id="transport"),
        pytest.param(ApiError(500, "InternalError", "etcd"), id="server-error"),
    ],
)
async def test_a_failed_group_unreserve_is_logged_and_passed_over(failure: Exception) -> None:
    # Go logs any error there and goes on: the next cycle comes back to it.
    pg = group(("gpu", "c"))
    other = {"resource": "pods", "name": "q", "uid": "q-uid"}
    w = group_world(pg, c_status=on_n2(pg, other))
    client = _Refusing(failure)
    w.handle._client = client
    p1 = member("p1", ("gpu", "c"))
    with structlog.testing.capture_logs() as logs:
        st = await group_post_filter(w, GroupView(pg, failed_group_cycle(w, p1), p1))
    assert st.message() == "deallocation and deletion of ResourceClaims completed"
    assert len(client.patches) == 1
    (line,) = [r for r in logs if r["event"] == "group_claim_unreserve_failed"]
    assert line["log_level"] == "warning"
    assert line["kind"] == failure_kind(failure)


@pytest.mark.usefixtures("group_claims")
async def test_group_post_filter_frees_nothing_while_a_member_is_bound() -> None:
    pg = group(("gpu", "c"))
    w = group_world(pg, c_status=on_n2(pg))
    bound = make_pod("p0").scheduling_group("g").node("n2").obj()
    w.nodes[1].add_pod(bound)
    p1 = member("p1", ("gpu", "c"))
    st = await group_post_filter(w, GroupView(pg, failed_group_cycle(w, p1), p1))
    assert st.code == Code.UNSCHEDULABLE
    assert st.message() == "deallocation and deletion of ResourceClaims completed"
    assert w.client.patches == []


async def test_group_post_filter_frees_a_members_own_claim_and_says_gos_words() -> None:
    """Gate off: a member's own claim is freed as its PostFilter would; the answer is the
    group's, whatever was freed."""
    pg = group()
    c = on_n2(pg)
    c["reservedFor"] = []
    w = group_world(pg, c_status=c)
    p1 = member("p1", ("gpu", "c"))
    st = await group_post_filter(w, GroupView(pg, failed_group_cycle(w, p1), p1))
    assert st.message() == "deallocation and deletion of ResourceClaims completed"
    assert len(status_writes(w)) == 1


async def test_group_post_filter_without_a_members_pre_filter_says_nothing() -> None:
    w = group_world(group())
    view = GroupView(group(), CycleState(), member("p1"))
    view.attempted = False
    st = await group_post_filter(w, view)
    assert st.code == Code.UNSCHEDULABLE
    assert st.message() == ""


async def test_group_post_filter_leaves_a_topology_group_alone() -> None:
    pg = make_native_pod_group("g").topology("rack").obj()
    w = group_world(pg)
    st = await group_post_filter(w, GroupView(pg, CycleState(), member("p1")))
    assert st.code == Code.UNSCHEDULABLE
    assert st.message() == ""


# ---- queueing: a member waiting for the claim its group's template makes ---------------
# The resourceclaim controller creates the claim (owned by the PodGroup), then names it in
# the group's status and the pod's. The scheduler's pod and claim watches are separate
# streams (and their first lists separate reads), so the pod naming the claim can arrive
# before the claim does: PreEnqueue then gates the pod ("could not find ResourceClaim") and
# only the claim's Add can let it out. That hint must accept the group as the claim's
# owner as PreEnqueue does (Go's foreachPodResourceClaim with
# EnableDRAWorkloadResourceClaims, shared by PreEnqueue and both hints); it refused, so
# the member stayed gated (differential dra-podgroup-template-claim under load).
CLAIM_ADD = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD, "ResourceClaimAdd")
GROUP_V1BETA1 = ("PodGroup", "g", "scheduling.k8s.io/v1beta1")


def template_member(*, named: bool = True) -> Pod:
    """p of dra-podgroup-template-claim; `named`: the controller wrote its claim's name."""
    b = make_pod("p").uid("p-uid").scheduling_group("g").resource_claim("gpu", template="t")
    return (b.claim_status("gpu", "g-gpu-x") if named else b).obj()


@pytest.mark.parametrize(
    ("gate_on", "want"),
    [
        pytest.param(True, QueueingHint.QUEUE, id="group-claims-on"),
        # IsForPod without acceptPodGroupOwner: "Pod is not owner", as PreEnqueue says.
        pytest.param(False, QueueingHint.QUEUE_SKIP, id="group-claims-off"),
    ],
)
def test_hints_accept_the_claim_the_members_group_owns(gate_on: bool, want: QueueingHint) -> None:
    featuregates.set_current({"DRAWorkloadResourceClaims": gate_on})
    try:
        claim = template_claim(*GROUP_V1BETA1)
        w = World()
        w.handle._stores[RESOURCE_CLAIMS.resource] = filled_store([claim])
        pod = template_member()
        assert w.plugin.hints.claim_changed(pod, None, claim) is want
        assert w.plugin.hints.pod_updated(pod, template_member(named=False), pod) is want
        assert (w.plugin.pre_enqueue(pod) is None) is (want is QueueingHint.QUEUE)
    finally:
        featuregates.set_current(featuregates.DEFAULTS)


def _by_arrival(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.timestamp < b.timestamp


@pytest.mark.usefixtures("group_claims")
async def test_a_member_gated_before_its_group_claim_arrived_is_let_out_by_the_claim() -> None:
    w = World()
    plugin = w.plugin

    def pre_enqueue(pod: Pod) -> tuple[str, Status] | None:
        status = plugin.pre_enqueue(pod)
        return None if status is None else (plugin.name, status)

    profile = template_member().scheduler_name
    queue = SchedulingQueue(
        _by_arrival,
        FakeClock(),
        pre_enqueue=pre_enqueue,
        hints={profile: {plugin.name: plugin.events_to_register()}},
    )
    waiting = template_member(named=False)
    queue.add(waiting)
    assert queue.where("p-uid") == "gated"  # ResourceClaim not created yet
    named = template_member()
    queue.update(waiting, named)
    assert queue.where("p-uid") == "gated"  # could not find ResourceClaim
    claim = template_claim(*GROUP_V1BETA1)
    w.handle._stores[RESOURCE_CLAIMS.resource].upsert(claim.key, claim, "2")
    assert queue.move_all_to_active_or_backoff(CLAIM_ADD, None, claim) == 1
    assert queue.where("p-uid") == "active"
