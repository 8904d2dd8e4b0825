"""Consumable capacity (DRAConsumableCapacity, beta and on in 1.37): what one request
consumes of a device's capacity, and whether the device still has it.

Follows structured/internal/incubating/consumable_capacity.go: CmpRequestOverCapacity,
calculateConsumedCapacity (a request's amount rounded up to the capacity's request
policy: the policy's default or the whole capacity when the request names no amount, the
next valid value, or the range's minimum plus whole steps), violatesPolicy and
GetConsumedCapacityFromRequest. Quantities are exact Fractions; where Go works in int64
milli or whole units it does here too, with its overflow errors.

Ranges step in whole units: DRAFractionalCapacityRange is on in a 1.37 kube-scheduler
only from a minimum compatibility version of 1.37, which is not the default (1.36), so a
range from 100m in 100m steps takes 1 for a request of 150m, as the differential
scenario dra-consumable-capacity-fractional-range shows kube-scheduler doing. The milli
arithmetic is kept behind FRACTIONAL_CAPACITY_RANGE for when the gate's default moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from asched.api.dra import CapacityRequestPolicy, Device, DeviceCapacity
from asched.api.quantity import format_quantity

MAX_INT64 = 2**63 - 1
# DRAFractionalCapacityRange as kube-scheduler 1.37 runs it by default.
FRACTIONAL_CAPACITY_RANGE = False
_NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"


class CapacityError(Exception):
    """Go's errCapacityRequestNotRepresentable / errNegativeCapacity, named by capacity."""


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def _milli(value: Fraction) -> int | None:
    """safeMilliValue: the value in milli units, None when it has a finer part."""
    scaled = value * 1000
    return scaled.numerator if scaled.denominator == 1 else None


def _use_milli(policy: CapacityRequestPolicy) -> bool:
    """useMilli: the gate is on, every bound of the range is whole in milli units, the
    step at least 1m."""
    if not FRACTIONAL_CAPACITY_RANGE:
        return False
    for bound in (policy.range_min, policy.range_max, policy.range_step):
        if bound is not None and _milli(bound) is None:
            return False
    step = policy.range_step
    return step is None or (_milli(step) or 0) >= 1


def _round_up_range(requested: Fraction, policy: CapacityRequestPolicy) -> Fraction:
    """roundUpRange: at least the minimum, then up to the next whole step above it."""
    low = policy.range_min if policy.range_min is not None else Fraction(0)
    if requested < low:
        return low
    step = policy.range_step
    if step is None:
        return requested
    if _use_milli(policy):
        requested_milli = _milli(requested)
        if requested_milli is None:
            raise CapacityError(
                f"{_NOT_REPRESENTABLE}: request {format_quantity(requested)} is not a "
                "representable milli value"
            )
        step_milli, low_milli = _ceil(step * 1000), _ceil(low * 1000)
        n = -(-(requested_milli - low_milli) // step_milli)
        if n > (MAX_INT64 - low_milli) // step_milli:
            raise CapacityError(
                f"{_NOT_REPRESENTABLE}: rounding request {format_quantity(requested)} up to "
                "the next step passes the milli-value range"
            )
        return Fraction(low_milli + step_milli * n, 1000)
    if requested > MAX_INT64:
        raise CapacityError(
            f"{_NOT_REPRESENTABLE}: request {format_quantity(requested)} exceeds MaxInt64"
        )
    whole_step, whole_low = _ceil(step), _ceil(low)
    n = -(-(_ceil(requested) - whole_low) // whole_step)
    if whole_low >= 0 and n > (MAX_INT64 - whole_low) // whole_step:
        raise CapacityError(
            f"{_NOT_REPRESENTABLE}: rounding request {format_quantity(requested)} up to the "
            "next step passes MaxInt64"
        )
    return Fraction(whole_low + whole_step * n)


def consumed_capacity(requested: Fraction | None, capacity: DeviceCapacity) -> Fraction:
    """calculateConsumedCapacity."""
    policy = capacity.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.has_range and policy.range_min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def _violates_policy(value: Fraction, policy: CapacityRequestPolicy | None) -> bool:
    """violatesPolicy: the default always passes; otherwise the range (max and whole
    steps from the minimum) or the list of valid values decides."""
    if policy is None:
        return False
    if policy.default is not None and value == policy.default:
        return False
    if policy.has_range:
        if policy.range_max is not None and value > policy.range_max:
            return True
        step = policy.range_step
        if step is None:
            return False
        low = policy.range_min if policy.range_min is not None else Fraction(0)
        if _use_milli(policy):
            requested = _milli(value)
            if requested is None:
                return True
            return (requested - _ceil(low * 1000)) % _ceil(step * 1000) != 0
        return (_ceil(value) - _ceil(low)) % _ceil(step) != 0
    if policy.valid_values:
        return value not in policy.valid_values
    return False


def _consumed(requests: Mapping[str, Fraction] | None, device: Device) -> dict[str, Fraction]:
    out = {}
    for name, capacity in device.consumable.items():
        requested = None if requests is None else requests.get(name)
        try:
            value = consumed_capacity(requested, capacity)
        except CapacityError as exc:
            raise CapacityError(f'capacity "{name}": {exc}') from None
        out[name] = value
    return out


def fits(
    requests: Mapping[str, Fraction] | None,
    device: Device,
    allocated: Mapping[str, Fraction],
    allocating: Mapping[str, Fraction],
) -> bool:
    """CmpRequestOverCapacity: the request names only capacities the device has, each
    amount it consumes obeys the policy, and with what allocated claims (`allocated`)
    and this attempt (`allocating`) already consume it stays within the capacity."""
    if requests and any(name not in device.consumable for name in requests):
        return False
    consumed = _consumed(requests, device)
    for name, value in consumed.items():
        if value < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
    for name, capacity in device.consumable.items():
        value = consumed[name]
        if _violates_policy(value, capacity.policy):
            return False
        total = allocated.get(name, Fraction(0)) + value + allocating.get(name, Fraction(0))
        if total > capacity.value:
            return False
    return True


def consumed_by_request(
    requests: Mapping[str, Fraction] | None, device: Device
) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what one share of the device consumes."""
    return _consumed(requests, device)


Amount = int | Fraction


@dataclass(frozen=True, slots=True)
class PlainCapacity:
    """A device's capacities when none has a request policy, each value an int where it
    is whole (it is as resource.Quantity compares them: exactly, in the base unit) and a
    Fraction only where it is not. `fits_plain` answers for it what `fits` answers, with
    int arithmetic instead of Fraction's on the usual whole quantities."""

    values: tuple[tuple[str, Amount], ...]
    # Every value is at least zero: a request naming no capacity then fits whenever
    # nothing else consumes the device.
    nonnegative: bool


def _whole(value: Fraction) -> Amount:
    return value.numerator if value.denominator == 1 else value


def plain_capacity(device: Device) -> PlainCapacity | None:
    """The device's capacities in PlainCapacity's form, None when any has a policy (the
    rounding and policy checks of `fits` then decide)."""
    if any(c.policy is not None for c in device.consumable.values()):
        return None
    values = tuple((name, _whole(c.value)) for name, c in device.consumable.items())
    return PlainCapacity(values, all(v >= 0 for _, v in values))


def fits_plain(
    requests: Mapping[str, Fraction] | None,
    device: Device,
    plain: PlainCapacity,
    allocated: Mapping[str, Fraction],
    allocating: Mapping[str, Fraction],
) -> bool:
    """`fits` (CmpRequestOverCapacity) for a device without request policies: what a
    request consumes is its amount, or the whole capacity when it names none
    (calculateConsumedCapacity with a nil policy), and nothing can violate a policy."""
    if not requests:
        if not allocated and not allocating and plain.nonnegative:
            return True  # each capacity consumes exactly itself
        consumed = plain.values
    else:
        if any(name not in device.consumable for name in requests):
            return False
        consumed = tuple(
            (name, value if (r := requests.get(name)) is None else _whole(r))
            for name, value in plain.values
        )
    for name, amount in consumed:
        if amount < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
    for (name, amount), (_, value) in zip(consumed, plain.values, strict=True):
        total = amount
        already = allocated.get(name)
        if already is not None:
            total += _whole(already)
        taking = allocating.get(name)
        if taking is not None:
            total += _whole(taking)
        if total > value:
            return False
    return True
