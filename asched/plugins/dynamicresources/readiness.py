"""Device binding conditions (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus,
beta and on in 1.37): a device may ask that the pod be bound only once its driver has
reported it ready.

The allocator copies a device's `bindingConditions` and `bindingFailureConditions` into
the allocation result. PreBind then waits, after writing the claims, until every binding
condition of every result is True in the claim's `status.devices` (the driver's report),
polling the informer's claims every 5 s as Go's PollUntilContextTimeout does, up to the
plugin's bindingTimeout (600 s by default) counted from the start of the wait. A failure
condition that turns True, or a claim whose allocationTimestamp is older than the
timeout, fails the binding; the pod's next attempt then finds the claim unavailable in
Filter and PostFilter deallocates it, so other devices can be tried. Follows Go's
isClaimReadyForBinding, isClaimTimeout, isPodReadyForBinding and hasBindingConditions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from asched.api.dra import ResourceClaim
from asched.base.clock import Clock

# config.DynamicResourcesBindingTimeoutDefault
BINDING_TIMEOUT_DEFAULT = 600.0
# PreBind's wait.PollUntilContextTimeout interval.
POLL_INTERVAL = 5.0


class BindingFailed(Exception):
    """ErrDeviceBindingFailed or ErrDeviceBindingTimeout, worded as Go wraps them."""


def _go_quote(text: str) -> str:
    """Go's %q for the usual (printable) message."""
    return json.dumps(text, ensure_ascii=False)


def claim_ready(claim: ResourceClaim) -> bool:
    """isClaimReadyForBinding: every result with binding conditions has them all True in
    the claim's device status; raises BindingFailed when a failure condition is True."""
    if claim.allocation is None:
        return False
    for result in claim.allocation.results:
        if not result.binding_conditions:
            continue
        conditions = claim.device_conditions.get(result.device_id)
        if conditions is None:
            return False
        for name in result.binding_failure_conditions:
            failed = conditions.get(name)
            if failed is not None and failed.status == "True":
                raise BindingFailed(
                    f"device binding failed: claim={claim.name}, reason={failed.reason}, "
                    f"message={_go_quote(failed.message)}"
                )
        for name in result.binding_conditions:
            cond = conditions.get(name)
            if cond is None or cond.status != "True":
                return False
    return True


def claim_timed_out(claim: ResourceClaim, timeout: float, wall_now: float) -> bool:
    """isClaimTimeout: a result has binding conditions and the allocation is older than
    the binding timeout."""
    allocation = claim.allocation
    if allocation is None or allocation.timestamp is None:
        return False
    if not any(r.binding_conditions for r in allocation.results):
        return False
    return allocation.timestamp + timeout < wall_now


def claim_unavailable(claim: ResourceClaim, timeout: float, wall_now: float) -> bool:
    """Filter's test for an allocated claim: its binding failed, or it is not ready and
    timed out (then PostFilter may deallocate it)."""
    try:
        ready = claim_ready(claim)
    except BindingFailed:
        return True
    return not ready and claim_timed_out(claim, timeout, wall_now)


def has_binding_conditions(claims: Sequence[ResourceClaim]) -> bool:
    return any(
        r.binding_conditions
        for c in claims
        if c.allocation is not None
        for r in c.allocation.results
    )


def _pod_ready(
    claims: list[ResourceClaim],
    latest: Callable[[ResourceClaim], ResourceClaim | None],
    timeout: float,
    wall_now: float,
) -> bool:
    """isPodReadyForBinding over the claims as the informer has them now (each replaces
    its entry, so Unreserve works with what was read last)."""
    for i, claim in enumerate(claims):
        current = latest(claim)
        if current is None:
            raise BindingFailed(f'resourceclaim "{claim.name}" not found')
        claims[i] = current
        if not claim_ready(current):
            if claim_timed_out(current, timeout, wall_now):
                raise BindingFailed(f"device binding timeout: claim={current.name}")
            return False
    return True


async def wait_until_ready(
    claims: list[ResourceClaim],
    latest: Callable[[ResourceClaim], ResourceClaim | None],
    clock: Clock,
    binding_timeout: float,
) -> None:
    """PreBind's wait: check at once, then every POLL_INTERVAL until the timeout."""
    deadline = clock.now() + binding_timeout
    while not _pod_ready(claims, latest, binding_timeout, clock.wall()):
        left = deadline - clock.now()
        if left <= POLL_INTERVAL:
            await clock.sleep(left)
            raise BindingFailed("device binding timeout: context deadline exceeded")
        await clock.sleep(POLL_INTERVAL)
