"""What the allocator derives from one device and nothing else, kept while its slice is.

A ResourceSlice's devices do not change until the informer delivers a new slice object,
so a CEL selector's answer for a device and the device's capacities in integer form are
the same for every pod and node until then. Go's allocator evaluates the selectors again
per device per Filter call (cel.Cache keeps the compiled programs, not the answers);
here they are kept per device object, in the SliceIndex that holds the device's slice,
and dropped with it when a slice or DeviceTaintRule event replaces that index.

Keys are the identity of the Device objects: the SliceIndex keeps them alive, so an
identity cannot be reused by another device while a memo entry names it.
"""

from __future__ import annotations

from asched.api.dra import Device
from asched.plugins.dynamicresources.capacity import PlainCapacity, plain_capacity


class DeviceMemo:
    """Per-device answers for the devices of one SliceIndex."""

    def __init__(self) -> None:
        # (CEL expression, id(device)) -> whether the selector matches (DeviceMatches).
        # Runtime errors are not kept: they are raised again for each use, as Go does.
        self._selectors: dict[tuple[str, int], bool] = {}
        self._capacity: dict[int, PlainCapacity | None] = {}

    def selector(self, expression: str, device: Device) -> bool | None:
        """The remembered answer of `expression` for `device`, None if not evaluated."""
        return self._selectors.get((expression, id(device)))

    def remember_selector(self, expression: str, device: Device, matches: bool) -> None:
        self._selectors[(expression, id(device))] = matches

    def capacity(self, device: Device) -> PlainCapacity | None:
        """plain_capacity(device), computed once."""
        key = id(device)
        try:
            return self._capacity[key]
        except KeyError:
            plain = self._capacity[key] = plain_capacity(device)
            return plain
