"""A claim's matchAttribute constraints during the allocator's search.

Follows structured/internal/stable's matchAttributeConstraint: the devices picked for the
constrained requests (every request of the claim when the constraint names none) must all
carry the attribute, with one value of one type (a version never equals a string). The
search adds each device before it keeps it and removes it when it backtracks; only the
count of devices in the set is tracked, and the first device added to an empty set fixes
the value. Constraints are monotonic: once a device is refused, adding more cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from asched.api.dra import AttributeValue, Device, MatchAttribute

# (type, value): Go compares a DeviceAttribute's typed fields, never across types.
TypedValue = tuple[str, AttributeValue]


def attribute_of(device: Device, name: str) -> TypedValue | None:
    """Go's lookupAttribute over asched's attributes, which decoding already qualified
    with the driver's domain (so the short-name fallback is built in)."""
    value = device.attributes.get(name)
    if value is None:
        return None
    if name in device.versions:
        return ("version", value)
    return (type(value).__name__, value)


@dataclass(slots=True)
class _Match:
    attribute: str
    requests: frozenset[str]
    value: TypedValue | None = None
    count: int = 0

    def applies(self, request: str, sub_request: str) -> bool:
        """Go's matches: a constraint names the request, or the "request/sub" alternative."""
        if not self.requests:
            return True
        return request in self.requests or (
            bool(sub_request) and f"{request}/{sub_request}" in self.requests
        )

    def add(self, request: str, sub_request: str, device: Device) -> bool:
        if not self.applies(request, sub_request):
            return True
        value = attribute_of(device, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
        elif value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if self.applies(request, sub_request):
            self.count -= 1


class ClaimConstraints:
    """One claim's constraints for one node's search."""

    def __init__(self, constraints: Sequence[MatchAttribute]) -> None:
        self._matches = [_Match(c.attribute, frozenset(c.requests)) for c in constraints]

    def add(self, request: str, sub_request: str, device: Device) -> bool:
        """Add the device to every constraint, or to none (False: some refused it)."""
        for i, m in enumerate(self._matches):
            if not m.add(request, sub_request, device):
                for added in reversed(self._matches[:i]):
                    added.remove(request, sub_request)
                return False
        return True

    def remove(self, request: str, sub_request: str) -> None:
        """Undo a successful add of a device of this request (backtracking)."""
        for m in reversed(self._matches):
            m.remove(request, sub_request)
