"""Volume plugins: VolumeBinding's claims, matching, provisioning, assume cache, PreBind,
queueing hints; the storage decoders' errors; the placeholders that never reject."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from asched.api import DecodeError, Pod, decode_pod
from asched.api.storage import (
    CSIDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    decode_csi_driver,
    decode_csi_node,
    decode_csi_storage_capacity,
    decode_pv,
    decode_pvc,
    decode_storage_class,
)
from asched.framework.cycle_state import CycleState
from asched.framework.events import ActionType, EventResource, QueueingHint
from asched.framework.registry import ArgsError
from asched.framework.status import Code
from asched.plugins.volumes import (
    NodeVolumeLimits,
    VolumeBinding,
    VolumeBindingArgs,
    VolumeRestrictions,
    VolumeZone,
)
from asched.plugins.volumes.informers import (
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
    VOLUME_BINDING_INFORMERS,
)
from asched.testing.fakes import wait_for
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, RecordingClient, node_info


def with_volume(source: str, body: dict[str, Any] | None = None) -> Pod:
    raw = make_pod("p").raw()
    raw["spec"]["volumes"] = [{"name": "v", source: body or {}}]
    return decode_pod(raw)


def pv(
    name: str,
    size: str = "10Gi",
    *,
    cls: str = "local",
    node: str | None = None,
    phase: str = "Available",
    claim: tuple[str, str] | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    capacity: Any = None,
) -> PersistentVolume:
    spec: dict[str, Any] = {
        "capacity": {"storage": capacity if capacity is not None else size},
        "accessModes": list(modes),
        "storageClassName": cls,
        "local": {"path": "/mnt"},
    }
    if node is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
                        ]
                    }
                ]
            }
        }
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    return decode_pv(
        {
            "metadata": {"name": name, "resourceVersion": "1"},
            "spec": spec,
            "status": {"phase": phase},
        }
    )


def pvc(
    name: str,
    size: str = "5Gi",
    *,
    cls: str | None = "local",
    volume: str = "",
    bound: bool = False,
    annotations: dict[str, str] | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
) -> PersistentVolumeClaim:
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    spec: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": size}},
        "volumeName": volume,
    }
    if cls is not None:
        spec["storageClassName"] = cls
    return decode_pvc(
        {
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": f"uid-{name}",
                "resourceVersion": "1",
                "annotations": ann,
            },
            "spec": spec,
        }
    )


def sc(
    name: str,
    mode: str = "WaitForFirstConsumer",
    provisioner: str = "kubernetes.io/no-provisioner",
    zones: tuple[str, ...] = (),
) -> StorageClass:
    raw: dict[str, Any] = {
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if zones:
        raw["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}
        ]
    return decode_storage_class(raw)


ZONE = "topology.kubernetes.io/zone"


_REQUESTS: dict[type, Any] = {
    PersistentVolume: PERSISTENT_VOLUMES,
    PersistentVolumeClaim: PERSISTENT_VOLUME_CLAIMS,
    StorageClass: STORAGE_CLASSES,
    CSIDriver: CSI_DRIVERS,
    CSIStorageCapacity: CSI_STORAGE_CAPACITIES,
}


def handle(*objs: Any, nodes: Sequence[Any] = ()) -> FakeHandle:
    by_type: dict[str, list[Any]] = {r.resource: [] for r in VOLUME_BINDING_INFORMERS}
    for obj in objs:
        by_type[_REQUESTS[type(obj)].resource].append(obj)
    return FakeHandle(list(nodes), stores=by_type)


def node(name: str, zone: str = "a") -> Any:
    return make_node(name).label("kubernetes.io/hostname", name).label(ZONE, zone).obj()


def feasible(plugin: VolumeBinding, pod: Pod, nodes: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    """node name -> rejection reasons (empty when the node fits)."""
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None, st
    out = {}
    for n in nodes:
        f = plugin.filter(state, pod, node_info(n))
        out[n.name] = () if f is None else f.reasons
    return out


def test_pods_without_claims_skip() -> None:
    plugin = VolumeBinding(None, FakeHandle())
    _, st = plugin.pre_filter(CycleState(), with_volume("emptyDir"), [])
    assert st is not None
    assert st.code == Code.SKIP


@pytest.mark.parametrize(
    ("objs", "pod", "want"),
    [
        pytest.param(
            (),
            make_pod("p").pvc("data").obj(),
            'persistentvolumeclaim "data" not found',
            id="missing-pvc",
        ),
        pytest.param(
            (pvc("data", cls="fast"),),
            make_pod("p").pvc("data").obj(),
            "pod has unbound immediate PersistentVolumeClaims",
            id="missing-class-is-immediate",
        ),
        pytest.param(
            (pvc("data"), sc("local", mode="Immediate")),
            make_pod("p").pvc("data").obj(),
            "pod has unbound immediate PersistentVolumeClaims",
            id="unbound-immediate",
        ),
        pytest.param(
            (),
            with_volume("ephemeral", {"volumeClaimTemplate": {"spec": {}}}),
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-v"',
            id="ephemeral-not-created",
        ),
    ],
)
def test_pre_filter_rejects(objs: tuple[Any, ...], pod: Pod, want: str) -> None:
    _, st = VolumeBinding(None, handle(*objs)).pre_filter(CycleState(), pod, [])
    assert st is not None
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


NODES = (node("n1", "a"), node("n2", "b"))
CONFLICT = ("node(s) didn't match PersistentVolume's node affinity",)
NO_PV = ("node(s) didn't find available persistent volumes to bind",)
NO_SPACE = ("node(s) did not have enough free storage",)


@pytest.mark.parametrize(
    ("objs", "want"),
    [
        pytest.param(
            (
                pvc("data", volume="pv1", bound=True),
                pv("pv1", node="n2", claim=("default", "data")),
            ),
            {"n1": CONFLICT, "n2": ()},
            id="bound-pv-node-affinity",
        ),
        pytest.param(
            (pvc("data", volume="gone", bound=True),),
            {
                "n1": (
                    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
                ),
                "n2": (
                    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
                ),
            },
            id="bound-pv-missing",
        ),
        pytest.param(
            (pvc("data"), sc("local"), pv("pv1", node="n1")),
            {"n1": (), "n2": NO_PV},
            id="wffc-static-local-pv",
        ),
        pytest.param(
            (pvc("data", "20Gi"), sc("local"), pv("pv1", "10Gi", node="n1")),
            {"n1": NO_PV, "n2": NO_PV},
            id="wffc-pv-too-small",
        ),
        pytest.param(
            (pvc("data"), sc("local"), pv("pv1", node="n1", modes=("ReadOnlyMany",))),
            {"n1": NO_PV, "n2": NO_PV},
            id="wffc-access-modes",
        ),
        pytest.param(
            (pvc("data"), sc("local"), pv("pv1", node="n1", phase="Bound")),
            {"n1": NO_PV, "n2": NO_PV},
            id="wffc-pv-not-available",
        ),
        pytest.param(
            (pvc("data", cls="dyn"), sc("dyn", provisioner="p.example.com", zones=("b",))),
            {"n1": NO_PV, "n2": ()},
            id="wffc-provision-allowed-topologies",
        ),
        pytest.param(
            (
                pvc("data", cls="dyn", annotations={"volume.kubernetes.io/selected-node": "n2"}),
                sc("dyn", provisioner="p.example.com"),
            ),
            {"n1": NO_PV, "n2": ()},
            id="wffc-selected-node",
        ),
        pytest.param(
            (
                pvc("data", "5Gi", cls="dyn"),
                sc("dyn", provisioner="csi.example.com"),
                decode_csi_driver(
                    {"metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}}
                ),
                decode_csi_storage_capacity(
                    {
                        "metadata": {"name": "c1", "namespace": "kube-system"},
                        "storageClassName": "dyn",
                        "capacity": "1Gi",
                        "nodeTopology": {"matchLabels": {ZONE: "a"}},
                    }
                ),
                decode_csi_storage_capacity(
                    {
                        "metadata": {"name": "c2", "namespace": "kube-system"},
                        "storageClassName": "dyn",
                        "capacity": "100Gi",
                        "nodeTopology": {"matchLabels": {ZONE: "b"}},
                    }
                ),
            ),
            {"n1": NO_SPACE, "n2": ()},
            id="csi-storage-capacity",
        ),
    ],
)
def test_filter(objs: tuple[Any, ...], want: dict[str, tuple[str, ...]]) -> None:
    pod = make_pod("p").pvc("data").obj()
    assert feasible(VolumeBinding(None, handle(*objs)), pod, NODES) == want


def test_smallest_fitting_pv_is_chosen_and_assumed() -> None:
    h = handle(
        pvc("a", "5Gi"),
        pvc("b", "5Gi"),
        sc("local"),
        pv("big", "50Gi", node="n1"),
        pv("small", "6Gi", node="n1"),
        nodes=[node_info(NODES[0])],
    )
    plugin = VolumeBinding(None, h)
    first, second = make_pod("p1").pvc("a").obj(), make_pod("p2").pvc("b").obj()
    state = CycleState()
    plugin.pre_filter(state, first, [])
    assert plugin.filter(state, first, node_info(NODES[0])) is None
    assert plugin.reserve(state, first, "n1") is None
    assumed = plugin._listers.pvs.get("small")
    assert assumed is not None
    assert assumed.claim_ref is not None
    assert assumed.claim_ref.name == "a"
    # The second pod's cycle sees "small" taken and gets "big".
    state2 = CycleState()
    plugin.pre_filter(state2, second, [])
    assert plugin.filter(state2, second, node_info(NODES[0])) is None
    assert plugin.reserve(state2, second, "n1") is None
    big = plugin._listers.pvs.get("big")
    assert big is not None
    assert big.claim_ref is not None
    assert big.claim_ref.name == "b"
    # Unreserve gives "big" back.
    plugin.unreserve(state2, second, "n1")
    big = plugin._listers.pvs.get("big")
    assert big is not None
    assert big.claim_ref is None


def test_two_pods_compete_for_one_pv() -> None:
    plugin = VolumeBinding(None, handle(pvc("a"), pvc("b"), sc("local"), pv("only", node="n1")))
    p1, p2 = make_pod("p1").pvc("a").obj(), make_pod("p2").pvc("b").obj()
    s1 = CycleState()
    plugin.pre_filter(s1, p1, [])
    assert plugin.filter(s1, p1, node_info(NODES[0])) is None
    plugin.reserve(s1, p1, "n1")
    assert feasible(plugin, p2, NODES[:1]) == {"n1": NO_PV}


def reserved(
    timeout: int, *objs: Any
) -> tuple[VolumeBinding, FakeHandle, RecordingClient, CycleState, Pod]:
    """VolumeBinding with `objs` in its caches, the pod "p" (claim "data") reserved on n1."""
    client = RecordingClient()
    n1 = node_info(NODES[0])
    stores: dict[str, list[Any]] = {r.resource: [] for r in VOLUME_BINDING_INFORMERS}
    for obj in objs:
        stores[_REQUESTS[type(obj)].resource].append(obj)
    h = FakeHandle([n1], client, stores=stores)
    plugin = VolumeBinding(VolumeBindingArgs(bind_timeout_seconds=timeout), h)
    pod = make_pod("p").pvc("data").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, n1) is None
    assert plugin.reserve(state, pod, "n1") is None
    return plugin, h, client, state, pod


def test_pre_bind_pre_flight_has_work_only_for_claims_left_to_bind() -> None:
    # VolumeBinding.PreBindPreFlight: Skip when Reserve found every claim bound (or the
    # pod has none), Success when PreBind will write bindings.
    plugin, _, _, state, pod = reserved(5, pv("pv1", node="n1"), pvc("data"), sc("local"))
    assert plugin.pre_bind_pre_flight(state, pod, "n1") is None
    bound, _, _, bound_state, bound_pod = reserved(
        5, pv("pv1", node="n1"), pvc("data", volume="pv1", bound=True), sc("local")
    )
    skipped = bound.pre_bind_pre_flight(bound_state, bound_pod, "n1")
    assert skipped is not None
    assert skipped.code == Code.SKIP
    plain = CycleState()
    plugin.pre_filter(plain, make_pod("q").obj(), [])
    no_claims = plugin.pre_bind_pre_flight(plain, make_pod("q").obj(), "n1")
    assert no_claims is not None
    assert no_claims.code == Code.SKIP


def test_pre_bind_pre_flight_for_a_node_filter_never_saw_is_an_error() -> None:
    plugin, _, _, state, pod = reserved(5, pv("pv1", node="n1"), pvc("data"), sc("local"))
    st = plugin.pre_bind_pre_flight(state, pod, "n9")
    assert st is not None
    assert st.code == Code.ERROR
    assert st.reasons == ('no pod volume found for node "n9"',)


async def test_pre_bind_writes_claim_ref_and_waits_for_pv_controller() -> None:
    plugin, h, client, state, pod = reserved(5, pv("pv1", node="n1"), pvc("data"), sc("local"))
    result: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            result.append(await plugin.pre_bind(state, pod, "n1"))

        tg.start_soon(run)
        await wait_for(lambda: h.clock.sleepers == 1)
        ((method, path, body, _),) = client.requests
        assert (method, path) == ("PATCH", "/api/v1/persistentvolumes/pv1")
        assert body["spec"]["claimRef"]["name"] == "data"
        assert body["metadata"]["resourceVersion"] == "1"
        # The PV controller completes the bind: PV claimRef and PVC bind-completed.
        store = h.store(PERSISTENT_VOLUME_CLAIMS)
        store.upsert("default/data", pvc("data", volume="pv1", bound=True), "2")  # type: ignore[attr-defined]
        h.clock.advance(1)
    assert result == [None]


async def test_pre_bind_times_out() -> None:
    plugin, h, client, state, pod = reserved(
        2, pvc("data", cls="dyn"), sc("dyn", provisioner="p.example.com")
    )
    result: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            result.append(await plugin.pre_bind(state, pod, "n1"))

        tg.start_soon(run)
        # Polled at t=0 and t=1; at t=2 the 2 s bindTimeoutSeconds is over.
        for _ in range(2):
            await wait_for(lambda: h.clock.sleepers == 1)
            h.clock.advance(1)
    (st,) = result
    assert st.code == Code.ERROR
    assert st.reasons == ("binding volumes: context deadline exceeded",)
    ((_, path, body, _),) = client.requests
    assert path == "/api/v1/namespaces/default/persistentvolumeclaims/data"
    assert body["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "n1"}


def _cap(limit: str | None, max_size: str | None = None) -> CSIStorageCapacity:
    raw: dict[str, Any] = {"metadata": {"name": "c", "namespace": "ns"}, "storageClassName": "s"}
    if limit is not None:
        raw["capacity"] = limit
    if max_size is not None:
        raw["maximumVolumeSize"] = max_size
    return decode_csi_storage_capacity(raw)


P = make_pod("p").pvc("data").obj()


@pytest.mark.parametrize(
    ("resource", "old", "new", "want"),
    [
        pytest.param(
            EventResource.PERSISTENT_VOLUME_CLAIM,
            None,
            pvc("data"),
            QueueingHint.QUEUE,
            id="own-pvc",
        ),
        pytest.param(
            EventResource.PERSISTENT_VOLUME_CLAIM,
            None,
            pvc("other"),
            QueueingHint.QUEUE_SKIP,
            id="other-pvc",
        ),
        pytest.param(
            EventResource.STORAGE_CLASS, None, sc("s"), QueueingHint.QUEUE, id="class-added"
        ),
        pytest.param(
            EventResource.STORAGE_CLASS,
            sc("s"),
            sc("s", zones=("a",)),
            QueueingHint.QUEUE,
            id="class-topology",
        ),
        pytest.param(
            EventResource.STORAGE_CLASS, sc("s"), sc("s"), QueueingHint.QUEUE_SKIP, id="class-same"
        ),
        pytest.param(
            EventResource.CSI_STORAGE_CAPACITY,
            None,
            _cap("1Gi"),
            QueueingHint.QUEUE,
            id="capacity-added",
        ),
        pytest.param(
            EventResource.CSI_STORAGE_CAPACITY,
            _cap("1Gi"),
            _cap("2Gi"),
            QueueingHint.QUEUE,
            id="capacity-grew",
        ),
        pytest.param(
            EventResource.CSI_STORAGE_CAPACITY,
            _cap("2Gi"),
            _cap("1Gi"),
            QueueingHint.QUEUE_SKIP,
            id="capacity-shrank",
        ),
        pytest.param(
            EventResource.CSI_STORAGE_CAPACITY,
            _cap("1Gi"),
            _cap("9Gi", "1Gi"),
            QueueingHint.QUEUE_SKIP,
            id="max-size-wins",
        ),
        pytest.param(
            EventResource.CSI_DRIVER,
            decode_csi_driver({"metadata": {"name": "d"}, "spec": {"storageCapacity": True}}),
            decode_csi_driver({"metadata": {"name": "d"}, "spec": {"storageCapacity": False}}),
            # Only a pod with an in-line CSI volume of the driver cares (test_volume_hints).
            QueueingHint.QUEUE_SKIP,
            id="driver-capacity-off-no-inline-volume",
        ),
        pytest.param(
            EventResource.CSI_NODE,
            decode_csi_node({"metadata": {"name": "n"}}),
            decode_csi_node({"metadata": {"name": "n"}}),
            QueueingHint.QUEUE_SKIP,
            id="csinode-unchanged",
        ),
    ],
)
def test_queueing_hints(resource: EventResource, old: Any, new: Any, want: QueueingHint) -> None:
    events = VolumeBinding(None, FakeHandle()).events_to_register()
    (hint,) = [e.hint for e in events if e.event.resource == resource]
    assert hint is not None
    assert hint(P, old, new) == want


def test_events_registered_like_go() -> None:
    events = {
        e.event.resource: e.event.action
        for e in VolumeBinding(None, FakeHandle()).events_to_register()
    }
    assert events[EventResource.PERSISTENT_VOLUME] == ActionType.ADD | ActionType.UPDATE
    assert events[EventResource.NODE] == ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    assert events[EventResource.CSI_DRIVER] == ActionType.UPDATE


@pytest.mark.parametrize(
    ("decode", "raw", "field"),
    [
        pytest.param(
            decode_pv,
            {"metadata": {"name": "bad"}, "spec": {"capacity": {"storage": "ten gigs"}}},
            "spec.capacity.storage",
            id="pv-capacity",
        ),
        pytest.param(
            decode_pvc,
            {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"accessModes": "RWO"}},
            "spec.accessModes",
            id="pvc-access-modes",
        ),
        pytest.param(
            decode_storage_class,
            {"metadata": {"name": "s"}, "volumeBindingMode": "Later"},
            "volumeBindingMode",
            id="class-mode",
        ),
        pytest.param(
            decode_csi_node,
            {
                "metadata": {"name": "n"},
                "spec": {"drivers": [{"name": "d", "allocatable": {"count": "x"}}]},
            },
            "spec.drivers[0].allocatable.count",
            id="csinode-count",
        ),
    ],
)
def test_decode_errors_name_the_field(decode: Any, raw: dict[str, Any], field: str) -> None:
    with pytest.raises(DecodeError) as exc:
        decode(raw)
    assert exc.value.field == field


def csi_pv(name: str, handle_id: str) -> PersistentVolume:
    return decode_pv(
        {
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "storageClassName": "manual",
                "csi": {"driver": "csi.example.com", "volumeHandle": handle_id},
            },
        }
    )


def csi_node(name: str, count: int) -> Any:
    return decode_csi_node(
        {
            "metadata": {"name": name},
            "spec": {"drivers": [{"name": "csi.example.com", "allocatable": {"count": count}}]},
        }
    )


@pytest.mark.parametrize(
    ("limit", "existing_claim", "want"),
    [
        pytest.param(1, "used", ("node(s) exceed max volume count",), id="limit-reached"),
        pytest.param(2, "used", (), id="room-left"),
        pytest.param(1, "data", (), id="shared-volume-counts-once"),
    ],
)
def test_node_volume_limits(limit: int, existing_claim: str, want: tuple[str, ...]) -> None:
    holder = make_pod("holder").pvc(existing_claim).node("n1").obj()
    n1 = node_info(NODES[0], holder)
    h = FakeHandle(
        [n1],
        stores={
            PERSISTENT_VOLUMES.resource: [csi_pv("v1", "h1"), csi_pv("v2", "h2")],
            PERSISTENT_VOLUME_CLAIMS.resource: [
                pvc("used", cls="manual", volume="v1", bound=True),
                pvc("data", cls="manual", volume="v2", bound=True),
            ],
            STORAGE_CLASSES.resource: [],
            CSI_NODES.resource: [csi_node("n1", limit)],
            VOLUME_ATTACHMENTS.resource: [],
            CSI_DRIVERS.resource: [],
        },
    )
    plugin = NodeVolumeLimits(None, h)
    pod = make_pod("p").pvc("data").obj()
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None
    got = plugin.filter(state, pod, n1)
    assert (() if got is None else got.reasons) == want


def zoned_pv(name: str, zone: str) -> PersistentVolume:
    raw: dict[str, Any] = {
        "metadata": {"name": name, "labels": {ZONE: zone}},
        "spec": {"capacity": {"storage": "1Gi"}, "storageClassName": "local"},
    }
    return decode_pv(raw)


@pytest.mark.parametrize(
    ("objs", "want"),
    [
        pytest.param(
            (pvc("data", volume="pv1", bound=True), zoned_pv("pv1", "b")),
            {"n1": ("node(s) had no available volume zone",), "n2": ()},
            id="zone-mismatch",
        ),
        pytest.param(
            (pvc("data", volume="pv1", bound=True), zoned_pv("pv1", "a__b")),
            {"n1": (), "n2": ()},
            id="multi-zone-value",
        ),
    ],
)
def test_volume_zone_filter(objs: tuple[Any, ...], want: dict[str, tuple[str, ...]]) -> None:
    plugin = VolumeZone(None, handle(*objs))
    pod = make_pod("p").pvc("data").obj()
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None
    got = {}
    for n in NODES:
        f = plugin.filter(state, pod, node_info(n))
        got[n.name] = () if f is None else f.reasons
    assert got == want


@pytest.mark.parametrize(
    ("objs", "code", "reason"),
    [
        pytest.param(
            (),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'persistentvolumeclaim "data" not found',
            id="missing",
        ),
        pytest.param((pvc("data"), sc("local")), Code.SKIP, "", id="wffc-unbound-skips"),
        pytest.param(
            (pvc("data"), sc("local", mode="Immediate")),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "PersistentVolume had no name",
            id="immediate-unbound",
        ),
        pytest.param(
            (pvc("data", cls=None),),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "PersistentVolumeClaim had no pv name and storageClass name",
            id="no-class",
        ),
    ],
)
def test_volume_zone_pre_filter(objs: tuple[Any, ...], code: Code, reason: str) -> None:
    _, st = VolumeZone(None, handle(*objs)).pre_filter(
        CycleState(), make_pod("p").pvc("data").obj(), []
    )
    assert st is not None
    assert st.code == code
    if reason:
        assert st.reasons == (reason,)


RWOP = ("ReadWriteOncePod",)


def test_read_write_once_pod_conflict_and_preemption_frees_it() -> None:
    holder = make_pod("holder").pvc("data").node("n1").obj()
    n1 = node_info(NODES[0], holder)
    h = FakeHandle(
        [n1, node_info(NODES[1])],
        stores={PERSISTENT_VOLUME_CLAIMS.resource: [pvc("data", modes=RWOP)]},
    )
    plugin = VolumeRestrictions(None, h)
    pod = make_pod("p").pvc("data").obj()
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None
    rejected = plugin.filter(state, pod, node_info(NODES[1]))
    assert rejected is not None
    assert rejected.code == Code.UNSCHEDULABLE
    assert rejected.reasons == (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod",
    )
    # Preemption's dry run removes the holder: the claim counts as freed.
    extensions = plugin.pre_filter_extensions()
    assert extensions is not None
    dry_run = state.clone()
    assert extensions.remove_pod(dry_run, pod, holder, n1) is None
    assert plugin.filter(dry_run, pod, n1) is None
    assert extensions.add_pod(dry_run, pod, holder, n1) is None
    assert plugin.filter(dry_run, pod, n1) is not None
    # The original state is untouched by the dry run.
    assert plugin.filter(state, pod, n1) is not None


def test_read_write_once_pod_unused_skips() -> None:
    h = FakeHandle(
        [node_info(NODES[0])], stores={PERSISTENT_VOLUME_CLAIMS.resource: [pvc("data", modes=RWOP)]}
    )
    _, st = VolumeRestrictions(None, h).pre_filter(
        CycleState(), make_pod("p").pvc("data").obj(), []
    )
    assert st is not None
    assert st.code == Code.SKIP


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param({}, VolumeBindingArgs(600, None), id="default"),
        pytest.param({"bindTimeoutSeconds": 30}, VolumeBindingArgs(30, None), id="timeout"),
    ],
)
def test_volume_binding_args(raw: dict[str, Any], want: VolumeBindingArgs) -> None:
    assert VolumeBindingArgs.from_dict(raw, "args") == want


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        pytest.param({"bindTimeoutSeconds": -1}, "args.bindTimeoutSeconds", id="negative"),
        pytest.param({"shape": []}, "args.shape", id="empty-shape"),
        pytest.param({"foo": 1}, "args.foo", id="unknown-field"),
    ],
)
def test_volume_binding_args_invalid(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(ArgsError) as exc:
        VolumeBindingArgs.from_dict(raw, "args")
    assert exc.value.path == path


def disk_pod(name: str, source: str, body: dict[str, Any], node: str = "") -> Pod:
    raw = make_pod(name).raw()
    raw["spec"]["volumes"] = [{"name": "disk", source: body}]
    if node:
        raw["spec"]["nodeName"] = node
    return decode_pod(raw)


RBD = {"monitors": ["m1", "m2"], "pool": "rbd", "image": "img"}


@pytest.mark.parametrize(
    ("source", "mine", "theirs", "conflict"),
    [
        pytest.param("gcePersistentDisk", {"pdName": "d"}, {"pdName": "d"}, True, id="gce-same"),
        pytest.param(
            "gcePersistentDisk",
            {"pdName": "d", "readOnly": True},
            {"pdName": "d", "readOnly": True},
            False,
            id="gce-both-read-only",
        ),
        pytest.param("gcePersistentDisk", {"pdName": "d"}, {"pdName": "e"}, False, id="gce-other"),
        pytest.param(
            "awsElasticBlockStore",
            {"volumeID": "v", "readOnly": True},
            {"volumeID": "v", "readOnly": True},
            True,
            id="ebs-even-read-only",
        ),
        pytest.param(
            "iscsi",
            {"iqn": "q", "targetPortal": "p", "lun": 0},
            {"iqn": "q", "targetPortal": "p", "lun": 0},
            True,
            id="iscsi-same",
        ),
        pytest.param(
            "rbd", RBD, {**RBD, "monitors": ["m2", "m3"]}, True, id="rbd-overlapping-monitors"
        ),
        pytest.param("rbd", RBD, {**RBD, "monitors": ["m9"]}, False, id="rbd-other-monitors"),
        pytest.param("rbd", RBD, {**RBD, "pool": "other"}, False, id="rbd-other-pool"),
    ],
)
def test_inline_disk_conflicts(
    source: str, mine: dict[str, Any], theirs: dict[str, Any], conflict: bool
) -> None:
    existing = disk_pod("e1", source, theirs, node="n1")
    n1 = node_info(NODES[0], existing)
    plugin = VolumeRestrictions(None, FakeHandle([n1]))
    pod = disk_pod("p", source, mine)
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [])
    assert st is None
    got = plugin.filter(state, pod, n1)
    assert (got is not None) is conflict
    if got is not None:
        assert (got.code, got.reasons) == (Code.UNSCHEDULABLE, ("node(s) had no available disk",))
    # Deleting the holder queues the pod exactly when it held the conflicting disk.
    (deleted,) = [e for e in plugin.events_to_register() if e.event.resource == EventResource.POD]
    assert deleted.hint is not None
    want = QueueingHint.QUEUE if conflict else QueueingHint.QUEUE_SKIP
    assert deleted.hint(pod, existing, None) == want


def test_score_prefers_roomier_static_volumes_like_storage_capacity_scoring() -> None:
    # 4Gi of a 5Gi PV is 80% used (score 20); of a 50Gi PV 8% (score 92).
    plugin = VolumeBinding(
        None,
        handle(
            pvc("data", "4Gi"),
            sc("local"),
            pv("small", "5Gi", node="n1"),
            pv("big", "50Gi", node="n2"),
        ),
    )
    pod = make_pod("p").pvc("data").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    for n in NODES:
        assert plugin.filter(state, pod, node_info(n)) is None
    assert plugin.pre_score(state, pod, []) is None
    assert [plugin.score(state, pod, node_info(n)) for n in NODES] == [20, 92]


def test_score_skips_pods_without_claims() -> None:
    plugin = VolumeBinding(None, FakeHandle())
    state = CycleState()
    pod = make_pod("p").obj()
    plugin.pre_filter(state, pod, [])
    st = plugin.pre_score(state, pod, [])
    assert st is not None
    assert st.code == Code.SKIP
