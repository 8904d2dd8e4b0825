"""The annotations through which pods and nodes talk to these policies, and their parsers.

Why annotations: the seed article's wishes ("only these regions", "at least this GPU
driver", "near here") are per-pod choices that Kubernetes has no field for, and metrics
agents publish node measurements the same way. Keeping every key and its grammar in one
module means the plugins, the tests and the README cannot drift apart.

Guarantees: the parsers never raise on user input. They return None (or an empty set)
for "not given" and say "malformed" in their return type, so a plugin decides whether a
bad value rejects the pod, falls back to a default, or is ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PREFIX = "policies.asched.dev/"
# "cn-north,cn-east": the regions a pod may run in (RegionFence).
REGIONS = PREFIX + "regions"
# "535": the lowest GPU driver major version a GPU pod accepts (GPUDriver).
MIN_GPU_DRIVER = PREFIX + "min-gpu-driver"
# "<region>/<zone>" or "<region>": where the pod would like to run (Location).
LOCATION = PREFIX + "location"
# "0.37": a node's measured CPU utilisation in [0, 1], written by a metrics agent
# (CPUUtilization's default annotation).
CPU_UTILIZATION = PREFIX + "cpu-utilization"


def parse_regions(value: str | None) -> frozenset[str]:
    """Comma-separated region names; blanks around and between commas are ignored."""
    if value is None:
        return frozenset()
    return frozenset(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class Malformed:
    """A value was given but does not parse; `text` is the value as written."""

    text: str


def parse_non_negative_int(value: str | None) -> int | Malformed | None:
    """A decimal integer >= 0 (surrounding blanks allowed); None when not given."""
    if value is None:
        return None
    text = value.strip()
    if not text.isdigit() or not text.isascii():
        return Malformed(value)
    return int(text)


def parse_fraction(value: str | None) -> float | Malformed | None:
    """A finite float in [0, 1]; None when not given."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return Malformed(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        return Malformed(value)
    return number


@dataclass(frozen=True, slots=True)
class Place:
    """A region, and optionally a zone inside it ("" = anywhere in the region)."""

    region: str
    zone: str = ""


def parse_location(value: str | None) -> Place | Malformed | None:
    """ "<region>/<zone>" or "<region>"; None when not given."""
    if value is None:
        return None
    region, slash, zone = value.strip().partition("/")
    region, zone = region.strip(), zone.strip()
    if not region or (slash and not zone) or "/" in zone:
        return Malformed(value)
    return Place(region, zone)
