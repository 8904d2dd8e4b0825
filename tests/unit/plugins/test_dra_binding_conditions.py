"""DynamicResources with device binding conditions (DRADeviceBindingConditions, beta and
on in 1.37): the allocation carries the device's conditions, PreBind waits for the
driver to report them True (or fails on a failure condition or the binding timeout),
and Filter treats a claim whose binding failed or timed out as unavailable."""

from __future__ import annotations

import copy
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from asched.api.dra import decode_resource_claim
from asched.framework.registry import ArgsError
from asched.framework.status import Code, Status
from asched.plugins.dynamicresources import DynamicResources
from asched.plugins.dynamicresources.args import DynamicResourcesArgs
from asched.plugins.dynamicresources.readiness import BindingFailed, claim_ready
from asched.plugins.dynamicresources.tracker import RESOURCE_CLAIMS
from asched.testing import dra
from asched.testing.fakes import wait_for
from tests.unit.plugins.test_dynamicresources import (
    GPU,
    World,
    claim_pod,
    gpu_slice,
    reserved_on_n1,
)

ATTACHED = "attached"
FAILED = "attach-failed"


def attachable_gpu() -> dict[str, Any]:
    device = dra.device("gpu-0")
    device["bindingConditions"] = [ATTACHED]
    device["bindingFailureConditions"] = [FAILED]
    return device


def world(args: DynamicResourcesArgs | None = None) -> World:
    w = World(
        claims=(dra.resource_claim("c", dra.device_request("gpu", "gpu")),),
        slices=(gpu_slice("n1", attachable_gpu()),),
    )
    if args is not None:
        w.plugin = DynamicResources(args, w.handle)
    return w


def reported(written: dict[str, Any], version: str, **conditions: str) -> dict[str, Any]:
    """The claim as the driver leaves it: PreBind's write plus status.devices."""
    claim = copy.deepcopy(written)
    claim["metadata"] = {
        "namespace": "default",
        "name": "c",
        "uid": "claim-0",
        "resourceVersion": version,
    }
    claim["status"]["devices"] = [
        {
            "driver": GPU,
            "pool": "n1",
            "device": "gpu-0",
            "conditions": [
                {"type": t, "status": s, "reason": "Driver", "message": f"{t} is {s}"}
                for t, s in conditions.items()
            ],
        }
    ]
    return claim


async def pre_bind_while(w: World, driver: Any) -> Status | None:
    """Run PreBind for pod p on n1; `driver(written)` acts once PreBind waits."""
    pod = claim_pod()
    state = reserved_on_n1(w, pod)
    result: list[Status | None] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            result.append(await w.plugin.pre_bind(state, pod, "n1"))

        tg.start_soon(run)
        await wait_for(lambda: w.handle.clock.sleepers == 1)
        (_, written) = w.client.patches[-1]
        await driver(written)
    (st,) = result
    return st


def upsert(w: World, claim: dict[str, Any], version: str) -> None:
    store = w.handle.store(RESOURCE_CLAIMS)
    store.upsert("default/c", decode_resource_claim(claim), version)  # type: ignore[attr-defined]


async def test_pre_bind_waits_for_the_binding_conditions() -> None:
    w = world()

    async def driver(written: dict[str, Any]) -> None:
        results = written["status"]["allocation"]["devices"]["results"]
        assert results[0]["bindingConditions"] == [ATTACHED]
        assert results[0]["bindingFailureConditions"] == [FAILED]
        assert written["status"]["allocation"]["allocationTimestamp"].endswith("Z")
        # Polled every 5 s: not yet attached.
        w.handle.clock.advance(5)
        await wait_for(lambda: w.handle.clock.sleepers == 1)
        upsert(w, reported(written, "50", attached="True"), "50")
        w.handle.clock.advance(5)

    assert await pre_bind_while(w, driver) is None
    ((_, event_type, reason, action, message),) = w.handle.events.recorded
    assert (event_type, reason, action, message) == (
        "Normal",
        "BindingConditionsPending",
        "Scheduling",
        "waiting for binding conditions for device on node n1",
    )


async def test_a_failure_condition_fails_the_binding() -> None:
    w = world()

    async def driver(written: dict[str, Any]) -> None:
        upsert(w, reported(written, "50", attached="False", **{FAILED: "True"}), "50")
        w.handle.clock.advance(5)

    st = await pre_bind_while(w, driver)
    assert st is not None
    assert (st.code, st.message()) == (
        Code.ERROR,
        'device binding failed: claim=c, reason=Driver, message="attach-failed is True"',
    )


async def test_the_binding_times_out() -> None:
    w = world(DynamicResourcesArgs(binding_timeout=12))

    async def driver(written: dict[str, Any]) -> None:
        for _ in range(2):  # polls at 0, 5 and 10 s; the deadline is 12 s
            w.handle.clock.advance(5)
            await wait_for(lambda: w.handle.clock.sleepers == 1)
        w.handle.clock.advance(2)

    st = await pre_bind_while(w, driver)
    assert st is not None
    assert st.message() == "device binding timeout: context deadline exceeded"


def allocated_claim(timestamp: str, **conditions: str) -> dict[str, Any]:
    claim = dra.resource_claim("c", dra.device_request("gpu", "gpu"))
    claim["metadata"]["uid"] = "claim-0"
    result = {
        "request": "gpu",
        "driver": GPU,
        "pool": "n1",
        "device": "gpu-0",
        "bindingConditions": [ATTACHED],
        "bindingFailureConditions": [FAILED],
    }
    claim["status"] = {
        "allocation": {"devices": {"results": [result]}, "allocationTimestamp": timestamp},
        "devices": [
            {
                "driver": GPU,
                "pool": "n1",
                "device": "gpu-0",
                "conditions": [{"type": t, "status": s} for t, s in conditions.items()],
            }
        ],
    }
    return claim


def test_claim_ready() -> None:
    now = "2023-11-14T22:13:20Z"  # FakeClock's wall start
    assert claim_ready(decode_resource_claim(allocated_claim(now, attached="True")))
    assert not claim_ready(decode_resource_claim(allocated_claim(now, attached="False")))
    assert not claim_ready(decode_resource_claim(allocated_claim(now)))
    with pytest.raises(BindingFailed, match="device binding failed: claim=c"):
        claim_ready(decode_resource_claim(allocated_claim(now, **{FAILED: "True"})))


@pytest.mark.parametrize(
    ("timestamp", "conditions", "available"),
    [
        ("2023-11-14T22:13:00Z", {}, True),  # 20 s old: still waiting
        ("2023-11-14T22:03:00Z", {}, False),  # 620 s old: timed out
        ("2023-11-14T22:03:00Z", {ATTACHED: "True"}, True),  # old but ready
        ("2023-11-14T22:13:00Z", {FAILED: "True"}, False),  # failed
    ],
)
def test_filter_finds_a_failed_or_timed_out_claim_unavailable(
    timestamp: str, conditions: dict[str, str], available: bool
) -> None:
    w = World(
        claims=(allocated_claim(timestamp, **conditions),),
        slices=(gpu_slice("n1", attachable_gpu()),),
    )
    _, pre, results = w.filter_all(claim_pod())
    assert pre is None
    st = results["n1"]
    if available:
        assert st is None
    else:
        assert st is not None
        assert st.message() == "resourceclaim not available on the node"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"bindingTimeout": "2m"}, 120.0),
        ({}, 600.0),
    ],
)
def test_binding_timeout_args(raw: dict[str, Any], expected: float) -> None:
    assert DynamicResourcesArgs.from_dict(raw, "args").binding_timeout == expected


def test_binding_timeout_below_a_second_is_refused() -> None:
    with pytest.raises(ArgsError, match=r"args\.bindingTimeout.*must be at least 1 second"):
        DynamicResourcesArgs.from_dict({"bindingTimeout": "500ms"}, "args")
