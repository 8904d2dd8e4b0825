"""DynamicResources' allocator with partitionable devices (DRAPartitionableDevices, beta
and on in 1.37): counter sets in their own slices, devices that consume them, the pool
validations of buildPool, and per-device node selection. The expected answers follow
structured/internal/incubating's checkAvailableCounters and GatherPools. Also the
DeviceTaintRules the slice tracker applies to the slices the allocator reads."""

from __future__ import annotations

from typing import Any

import pytest

from asched.api.dra import (
    ResourceClaim,
    decode_device_class,
    decode_device_taint_rule,
    decode_resource_claim,
)
from asched.api.dra import decode_resource_slice as decode_slice
from asched.api.errors import DecodeError
from asched.plugins.dynamicresources.allocator import Allocator, NodeAllocationFailure
from asched.plugins.dynamicresources.pools import DeviceID
from asched.plugins.dynamicresources.tracker import AllocatedState, with_taint_rules
from asched.testing import dra

GPU = "gpu.example.com"


def counters_slice(
    node: str, sets: dict[str, dict[str, str]], *, name: str = "", slice_count: int = 2
) -> dict[str, Any]:
    """The pool's counter slice: `sets` maps a counter set to its counters."""
    body = dra.resource_slice(name or f"{node}-counters", node, [], slice_count=slice_count)
    del body["spec"]["devices"]
    body["spec"]["sharedCounters"] = [
        {"name": s, "counters": {c: {"value": v} for c, v in counters.items()}}
        for s, counters in sets.items()
    ]
    return body


def partition(name: str, counter_set: str = "gpu-0", **counters: str) -> dict[str, Any]:
    body = dra.device(name)
    body["consumesCounters"] = [
        {"counterSet": counter_set, "counters": {c: {"value": v} for c, v in counters.items()}}
    ]
    return body


def devices_slice(node: str, *devices: dict[str, Any], slice_count: int = 2) -> dict[str, Any]:
    return dra.resource_slice(f"{node}-devices", node, list(devices), slice_count=slice_count)


def claims(*counts: int) -> list[ResourceClaim]:
    return [
        decode_resource_claim(
            dra.resource_claim(f"c{i}", dra.device_request("gpu", "gpu", count=n))
        )
        for i, n in enumerate(counts)
    ]


def allocator(*slices: dict[str, Any], allocated: set[DeviceID] | None = None) -> Allocator:
    cls = decode_device_class(dra.device_class("gpu"))
    state = AllocatedState(devices=allocated or set())
    return Allocator({"gpu": cls}.get, state, [decode_slice(s) for s in slices])


def devices_of(result: Any) -> list[list[str]]:
    return [[r.device for r in a.results] for a in result]


# A GPU with 40Gi of memory in one counter set, offered whole or as two 20Gi halves or
# four 10Gi quarters: the partitions overlap, so only a combination whose memory adds up
# to at most 40Gi can be allocated.
GPU_COUNTERS = counters_slice("n1", {"gpu-0": {"memory": "40Gi"}})
GPU_PARTITIONS = devices_slice(
    "n1",
    partition("whole", memory="40Gi"),
    partition("half-0", memory="20Gi"),
    partition("half-1", memory="20Gi"),
    partition("quarter-0", memory="10Gi"),
)


def test_counters_limit_how_many_partitions_are_allocated() -> None:
    a = allocator(GPU_COUNTERS, GPU_PARTITIONS)
    # The whole GPU is first: then no other partition fits its counters.
    assert devices_of(a.allocate("n1", {}, claims(1))) == [["whole"]]
    assert a.allocate("n1", {}, claims(2)) is not None
    # Two devices: "whole" then anything overdraws, so the search backtracks to halves.
    assert devices_of(a.allocate("n1", {}, claims(2))) == [["half-0", "half-1"]]
    assert devices_of(a.allocate("n1", {}, claims(1, 1))) == [["half-0"], ["half-1"]]
    # Three devices need 20+20+10 > 40: nothing fits.
    assert a.allocate("n1", {}, claims(3)) is None


def test_allocated_devices_draw_on_the_counters() -> None:
    taken: set[DeviceID] = {(GPU, "n1", "half-1")}
    a = allocator(GPU_COUNTERS, GPU_PARTITIONS, allocated=taken)
    # 20Gi left: "whole" no longer fits, "half-0" does.
    assert devices_of(a.allocate("n1", {}, claims(1))) == [["half-0"]]
    # half-0 (20) and quarter-0 (10) would take 30 of the 20 left: one device at most.
    assert a.allocate("n1", {}, claims(1, 1)) is None


def test_an_overdrawn_counter_blocks_every_counting_device_of_the_pool() -> None:
    """checkAvailableCounters checks every counter of the pool, not only the device's:
    a counter already overdrawn by allocations (possible when a driver shrinks a set)
    leaves nothing for any device that consumes counters."""
    sets = counters_slice("n1", {"a": {"memory": "10Gi"}, "b": {"memory": "10Gi"}})
    devices = devices_slice(
        "n1",
        partition("a-big", "a", memory="20Gi"),
        partition("b-small", "b", memory="1Gi"),
        dra.device("plain"),
    )
    a = allocator(sets, devices, allocated={(GPU, "n1", "a-big")})
    # b-small would fit its own set, but set a is at -10Gi; "plain" consumes nothing.
    assert devices_of(a.allocate("n1", {}, claims(1))) == [["plain"]]
    assert a.allocate("n1", {}, claims(2)) is None


def test_counters_are_compared_exactly() -> None:
    sets = counters_slice("n1", {"s": {"cores": "1"}})
    devices = devices_slice(
        "n1",
        partition("p0", "s", cores="500m"),
        partition("p1", "s", cores="500m"),
        partition("p2", "s", cores="1m"),
    )
    a = allocator(sets, devices)
    assert devices_of(a.allocate("n1", {}, claims(2))) == [["p0", "p1"]]
    assert a.allocate("n1", {}, claims(3)) is None


@pytest.mark.parametrize(
    ("sets", "devices"),
    [
        # A device consumes a counter set the pool does not have.
        ({"gpu-0": {"memory": "40Gi"}}, [partition("x", "gpu-9", memory="1Gi")]),
        # ...or a counter its set lacks.
        ({"gpu-0": {"memory": "40Gi"}}, [partition("x", "gpu-0", cores="1")]),
    ],
    ids=["unknown-set", "unknown-counter"],
)
def test_invalid_counter_consumption_makes_the_pool_invalid(
    sets: dict[str, dict[str, str]], devices: list[dict[str, Any]]
) -> None:
    a = allocator(counters_slice("n1", sets), devices_slice("n1", *devices))
    with pytest.raises(NodeAllocationFailure, match="invalid resource pools were encountered"):
        a.allocate("n1", {}, claims(1))


def test_a_counter_set_declared_twice_makes_the_pool_invalid() -> None:
    first = counters_slice("n1", {"s": {"m": "1"}}, name="n1-c1", slice_count=3)
    second = counters_slice("n1", {"s": {"m": "1"}}, name="n1-c2", slice_count=3)
    devices = devices_slice("n1", partition("x", "s", m="1"), slice_count=3)
    with pytest.raises(NodeAllocationFailure):
        allocator(first, second, devices).allocate("n1", {}, claims(1))


def test_a_pool_without_its_counter_slice_is_incomplete() -> None:
    assert allocator(GPU_PARTITIONS).allocate("n1", {}, claims(1)) is None


def test_counter_slice_for_all_nodes_completes_a_node_pool() -> None:
    """The counter slice may target other nodes than the devices (here all nodes); the
    pool is still complete and its counters count."""
    sets = counters_slice("", {"gpu-0": {"memory": "40Gi"}})
    del sets["spec"]["nodeName"]
    sets["spec"]["allNodes"] = True
    sets["spec"]["pool"]["name"] = "n1"
    a = allocator(sets, GPU_PARTITIONS)
    assert devices_of(a.allocate("n1", {}, claims(2))) == [["half-0", "half-1"]]


def test_partitions_for_other_nodes_in_one_pool_share_the_counters() -> None:
    """A pool spread over two nodes' slices: the node's slice alone is incomplete, so the
    pool is completed from the whole cluster (checkSlicesInPool), and a partition
    allocated on the other node draws on the shared counter set too."""
    sets = counters_slice("n1", {"s": {"m": "2"}}, slice_count=3)
    sets["spec"]["pool"]["name"] = "shared"
    here = dra.resource_slice(
        "here", "n1", [partition("p1", "s", m="1")], pool="shared", slice_count=3
    )
    there = dra.resource_slice(
        "there", "n2", [partition("p2", "s", m="2")], pool="shared", slice_count=3
    )
    free = allocator(sets, here, there)
    assert devices_of(free.allocate("n1", {}, claims(1))) == [["p1"]]
    busy = allocator(sets, here, there, allocated={(GPU, "shared", "p2")})
    assert busy.allocate("n1", {}, claims(1)) is None


def per_device_slice(*devices: dict[str, Any]) -> dict[str, Any]:
    return dra.shared_slice("fabric", list(devices), pool="fabric")


def test_per_device_node_selection() -> None:
    on_n1 = {**dra.device("local"), "nodeName": "n1"}
    everywhere = {**dra.device("global"), "allNodes": True}
    by_label = {
        **dra.device("zonal"),
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            ]
        },
    }
    s = per_device_slice(on_n1, everywhere, by_label)
    a = allocator(s)
    on_one = a.allocate("n1", {}, claims(1))
    assert on_one is not None
    assert (devices_of(on_one), on_one[0].node_name) == ([["local"]], "n1")
    # n2 sees only the device for all nodes (its allocation is for no node) ...
    on_two = a.allocate("n2", {}, claims(1))
    assert on_two is not None
    assert (devices_of(on_two), on_two[0].node_name) == ([["global"]], "")
    assert a.allocate("n2", {}, claims(2)) is None
    # ... and, in zone a, the zonal one: the allocation carries the device's selector,
    # not the node it was made for (createNodeSelector; test_dra_node_selector.py).
    zonal = a.allocate("n3", {"zone": "a"}, claims(2))
    assert zonal is not None
    assert (devices_of(zonal), zonal[0].node_name) == ([["global", "zonal"]], "")
    assert zonal[0].node_selector is not None
    assert zonal[0].node_selector.matches({"zone": "a"}, "n9")


def test_a_slice_selecting_nodes_per_device_is_left_out_where_no_device_fits() -> None:
    s = per_device_slice({**dra.device("local"), "nodeName": "n1"})
    assert allocator(s).allocate("n2", {}, claims(1)) is None


def test_counter_decode_errors_name_the_field() -> None:
    bad = counters_slice("n1", {"s": {"m": "lots"}})
    with pytest.raises(DecodeError, match=r"spec\.sharedCounters\[0\]\.counters\.m\.value"):
        decode_slice(bad)
    bad_device = devices_slice("n1", partition("x", "s", m="1Gx"))
    with pytest.raises(
        DecodeError, match=r"spec\.devices\[0\]\.consumesCounters\[0\]\.counters\.m\.value"
    ):
        decode_slice(bad_device)


# ---- DeviceTaintRules (GA in 1.37) ------------------------------------------------------


def taint_rule(name: str, **selector: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": "maintenance", "value": "true", "effect": "NoSchedule"},
        },
    }


@pytest.mark.parametrize(
    ("selector", "tainted"),
    [
        ({}, ["gpu-0", "gpu-1"]),  # an empty selector picks every device
        ({"device": "gpu-1"}, ["gpu-1"]),
        ({"driver": GPU, "pool": "n1", "device": "gpu-0"}, ["gpu-0"]),
        ({"pool": "n2"}, []),
        ({"driver": "other.example.com"}, []),
    ],
)
def test_device_taint_rules_taint_the_devices_they_select(
    selector: dict[str, str], tainted: list[str]
) -> None:
    s = decode_slice(dra.resource_slice("n1-gpu", "n1", [dra.device("gpu-0"), dra.device("gpu-1")]))
    (patched,) = with_taint_rules([s], [decode_device_taint_rule(taint_rule("r", **selector))])
    assert [d.name for d in patched.devices if d.taints] == tainted
    no_selector = taint_rule("none")
    del no_selector["spec"]["deviceSelector"]
    (same,) = with_taint_rules([s], [decode_device_taint_rule(no_selector)])
    assert not any(d.taints for d in same.devices)
