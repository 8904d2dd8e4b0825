"""DynamicResources with consumable capacity (DRAConsumableCapacity, beta and on in
1.37): request policies as Go's consumable_capacity.go rounds and checks them, devices
shared by several allocations, and what the allocation written to the API says. Also
the plugin's args and the filter timeout that bounds one node's search."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from asched.api.dra import (
    CapacityRequestPolicy,
    DeviceCapacity,
    ResourceClaim,
    decode_device_class,
    decode_resource_claim,
)
from asched.api.dra import decode_resource_slice as decode_slice
from asched.api.quantity import parse_quantity_exact as q
from asched.framework.registry import ArgsError
from asched.plugins.dynamicresources import capacity
from asched.plugins.dynamicresources.allocator import (
    AllocationError,
    AllocationTimeout,
    Allocator,
)
from asched.plugins.dynamicresources.args import DynamicResourcesArgs
from asched.plugins.dynamicresources.binding import allocation_json
from asched.plugins.dynamicresources.capacity import CapacityError, consumed_capacity
from asched.plugins.dynamicresources.tracker import AllocatedState
from asched.testing import dra

GPU = "gpu.example.com"


def rng(low: str, step: str | None = None, high: str | None = None) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(
        range_min=q(low),
        range_step=None if step is None else q(step),
        range_max=None if high is None else q(high),
        has_range=True,
    )


@pytest.mark.parametrize(
    ("requested", "policy", "expected"),
    [
        (None, None, "10Gi"),  # no amount: the whole capacity
        (None, CapacityRequestPolicy(default=q("1Gi")), "1Gi"),  # ...or the default
        ("3Gi", None, "3Gi"),
        ("500Mi", rng("1Gi", "1Gi"), "1Gi"),  # below the minimum
        ("2.5Gi", rng("1Gi", "1Gi"), "3Gi"),  # up to the next whole step
        ("3Gi", rng("1Gi", "2Gi"), "3Gi"),  # already on a step
        ("3.5Gi", rng("1Gi"), "3.5Gi"),  # no step: as asked
        ("150m", rng("100m", "100m"), "1"),  # whole units: FractionalCapacityRange is off
        ("3", CapacityRequestPolicy(valid_values=(q("1"), q("4"), q("8"))), "4"),
        ("9", CapacityRequestPolicy(valid_values=(q("1"), q("4"), q("8"))), "9"),
    ],
)
def test_consumed_capacity_rounds_as_go(
    requested: str | None, policy: CapacityRequestPolicy | None, expected: str
) -> None:
    cap = DeviceCapacity(q("10Gi"), policy)
    assert consumed_capacity(None if requested is None else q(requested), cap) == q(expected)


@pytest.fixture
def fractional(monkeypatch: pytest.MonkeyPatch) -> None:
    """DRAFractionalCapacityRange on (a minimum compatibility version of 1.37)."""
    monkeypatch.setattr(capacity, "FRACTIONAL_CAPACITY_RANGE", True)


@pytest.mark.usefixtures("fractional")
def test_milli_steps_with_fractional_ranges() -> None:
    assert consumed_capacity(q("150m"), DeviceCapacity(q("10"), rng("100m", "100m"))) == q("200m")
    # A step finer than 1m, or a bound finer than milli: whole units again.
    assert consumed_capacity(q("150m"), DeviceCapacity(q("10"), rng("100m", "1u"))) == q("1")


@pytest.mark.usefixtures("fractional")
def test_a_request_finer_than_milli_on_a_milli_range_is_an_error() -> None:
    with pytest.raises(CapacityError, match="is not a representable milli value"):
        consumed_capacity(q("1500u"), DeviceCapacity(q("10"), rng("1m", "1m")))


def nic(name: str = "nic-0", bandwidth: str = "10Gi", **policy: Any) -> dict[str, Any]:
    """A network device shared by allocations, its bandwidth their capacity."""
    capacity: dict[str, Any] = {"value": bandwidth}
    if policy:
        capacity["requestPolicy"] = policy
    return {"name": name, "allowMultipleAllocations": True, "capacity": {"bandwidth": capacity}}


def claim(name: str, bandwidth: str | None = None, count: int = 1) -> ResourceClaim:
    request = dra.device_request("nic", "gpu", count=count)
    if bandwidth is not None:
        request["exactly"]["capacity"] = {"requests": {"bandwidth": bandwidth}}
    return decode_resource_claim(dra.resource_claim(name, request))


def allocator(*devices: dict[str, Any], state: AllocatedState | None = None) -> Allocator:
    cls = decode_device_class(dra.device_class("gpu"))
    slices = [decode_slice(dra.resource_slice("n1-nics", "n1", list(devices)))]
    return Allocator({"gpu": cls}.get, state or AllocatedState(), slices)


def test_claims_share_a_device_while_its_capacity_lasts() -> None:
    a = allocator(nic())
    two = a.allocate("n1", {}, [claim("c1", "4Gi"), claim("c2", "6Gi")])
    assert two is not None
    results = [r for allocation in two for r in allocation.results]
    assert [r.device for r in results] == ["nic-0", "nic-0"]
    assert [dict(r.consumed_capacity) for r in results] == [
        {"bandwidth": q("4Gi")},
        {"bandwidth": q("6Gi")},
    ]
    assert len({r.share_id for r in results}) == 2
    assert all(r.share_id for r in results)
    assert a.allocate("n1", {}, [claim("c1", "4Gi"), claim("c2", "7Gi")]) is None


def test_one_request_never_takes_a_shared_device_twice() -> None:
    """Go's startLocation: a request's next device comes after its previous one."""
    assert allocator(nic()).allocate("n1", {}, [claim("c", "1Gi", count=2)]) is None
    two = allocator(nic("a"), nic("b")).allocate("n1", {}, [claim("c", "1Gi", count=2)])
    assert two is not None
    assert [r.device for r in two[0].results] == ["a", "b"]


def test_capacity_consumed_by_allocated_shares_counts() -> None:
    state = AllocatedState(
        shared={(GPU, "n1", "nic-0")}, capacity={(GPU, "n1", "nic-0"): {"bandwidth": q("8Gi")}}
    )
    a = allocator(nic(), state=state)
    assert a.allocate("n1", {}, [claim("c", "3Gi")]) is None
    assert a.allocate("n1", {}, [claim("c", "2Gi")]) is not None


def test_a_request_without_an_amount_takes_the_whole_capacity_or_the_default() -> None:
    whole = allocator(nic()).allocate("n1", {}, [claim("c1"), claim("c2")])
    assert whole is None
    defaulted = allocator(nic(default="5Gi")).allocate("n1", {}, [claim("c1"), claim("c2")])
    assert defaulted is not None
    assert [dict(a.results[0].consumed_capacity) for a in defaulted] == [
        {"bandwidth": q("5Gi")}
    ] * 2


def test_rounded_requests_fill_the_device_sooner() -> None:
    """2.5Gi rounds up to 3Gi on a 1Gi-step range: three fit in 10Gi, not four."""
    device = nic(validRange={"min": "1Gi", "step": "1Gi"})
    assert allocator(device).allocate("n1", {}, [claim(f"c{i}", "2.5Gi") for i in range(3)])
    assert allocator(device).allocate("n1", {}, [claim(f"c{i}", "2.5Gi") for i in range(4)]) is None


def test_a_value_off_the_policy_is_refused() -> None:
    """violatesPolicy: above the range's maximum."""
    device = nic(validRange={"min": "1Gi", "max": "4Gi"})
    assert allocator(device).allocate("n1", {}, [claim("c", "5Gi")]) is None
    assert allocator(device).allocate("n1", {}, [claim("c", "4Gi")]) is not None


def test_capacity_requests_filter_exclusive_devices_too() -> None:
    """CmpRequestOverCapacity runs for every device: a request for more than an
    exclusive device has, or for a capacity it does not have, skips it."""
    small = dra.device("small", capacity={"memory": "40Gi"})
    big = dra.device("big", capacity={"memory": "80Gi"})
    request = dra.device_request("gpu", "gpu")
    request["exactly"]["capacity"] = {"requests": {"memory": "60Gi"}}
    c = decode_resource_claim(dra.resource_claim("c", request))
    result = allocator(small, big).allocate("n1", {}, [c])
    assert result is not None
    assert (result[0].results[0].device, result[0].results[0].share_id) == ("big", "")
    request["exactly"]["capacity"] = {"requests": {"cores": "1"}}
    unknown = decode_resource_claim(dra.resource_claim("c", request))
    assert allocator(small, big).allocate("n1", {}, [unknown]) is None


def test_a_shared_device_charges_its_counters_once() -> None:
    counters = dra.resource_slice("n1-counters", "n1", [], slice_count=2)
    del counters["spec"]["devices"]
    counters["spec"]["sharedCounters"] = [{"name": "s", "counters": {"m": {"value": "1"}}}]
    shared = {**nic(), "consumesCounters": [{"counterSet": "s", "counters": {"m": {"value": "1"}}}]}
    devices = dra.resource_slice("n1-nics", "n1", [shared], slice_count=2)
    cls = decode_device_class(dra.device_class("gpu"))
    a = Allocator(
        {"gpu": cls}.get, AllocatedState(), [decode_slice(counters), decode_slice(devices)]
    )
    assert a.allocate("n1", {}, [claim("c1", "1Gi"), claim("c2", "1Gi")]) is not None


def test_the_allocation_written_names_the_share_and_its_capacity() -> None:
    result = allocator(nic()).allocate("n1", {}, [claim("c", "1.5Gi")])
    assert result is not None
    body = allocation_json(result[0])["devices"]["results"][0]
    assert body["shareID"] == result[0].results[0].share_id
    assert q(body["consumedCapacity"]["bandwidth"]) == Fraction(3, 2) * 2**30
    # Read back, the share counts as allocated state.
    raw = dra.resource_claim("c", dra.device_request("nic", "gpu"))
    raw["status"] = {"allocation": allocation_json(result[0])}
    state = AllocatedState()
    allocation = decode_resource_claim(raw).allocation
    assert allocation is not None
    state.add(allocation)
    assert state.capacity == {(GPU, "n1", "nic-0"): {"bandwidth": q("1.5Gi")}}
    assert state.devices == set()


@pytest.mark.usefixtures("fractional")
def test_capacity_errors_name_claim_request_and_device() -> None:
    device = nic(validRange={"min": "1m", "step": "1m"})
    request = dra.device_request("nic", "gpu")
    request["exactly"]["capacity"] = {"requests": {"bandwidth": "1500u"}}
    c = decode_resource_claim(dra.resource_claim("c", request))
    with pytest.raises(
        AllocationError,
        match=r"claim default/c, request nic: checking capacity for device "
        r'gpu\.example\.com/n1/nic-0: capacity "bandwidth": capacity request cannot be',
    ):
        allocator(device).allocate("n1", {}, [c])


def test_a_search_past_the_filter_timeout_stops() -> None:
    """filterTimeout (DRASchedulerFilterTimeout, beta and on in 1.37): a search that runs
    past its deadline stops with AllocationTimeout; the plugin turns that into Go's
    "node <name>: timed out trying to allocate devices" Error. Here 40 devices and a
    matchAttribute constraint no two of them share make the search try every pair."""
    devices = [dra.device(f"d{i}", {"slot": i}) for i in range(40)]
    request = dra.device_request("gpu", "gpu", count=2)
    raw = dra.resource_claim("c", request)
    raw["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/slot"}]
    c = decode_resource_claim(raw)
    with pytest.raises(AllocationTimeout):
        allocator(*devices).allocate("n1", {}, [c], deadline=100, now=lambda: 101.0)
    # The clock is read only every few hundred tries: a search of a few tries finishes.
    assert allocator(*devices[:3]).allocate("n1", {}, [c], deadline=100, now=lambda: 101.0) is None
    assert allocator(*devices).allocate("n1", {}, [c]) is None  # no deadline: no fit


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"filterTimeout": "-1s"}, r"args\.filterTimeout.*must be zero or positive"),
        ({"bindingTimeout": "500ms"}, r"args\.bindingTimeout.*must be at least 1 second"),
        ({"filterTimeout": "ten"}, r"args\.filterTimeout.*invalid duration"),
    ],
)
def test_dynamic_resources_args_are_validated(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgsError, match=message):
        DynamicResourcesArgs.from_dict(raw, "args")
    assert DynamicResourcesArgs.from_dict({"filterTimeout": "0s"}, "args").filter_timeout == 0
    assert DynamicResourcesArgs.from_dict({}, "args").filter_timeout == 10
