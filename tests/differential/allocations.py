"""What a scheduler wrote into a scenario's DRA ResourceClaims, and how two runs compare.

Read for scenarios that say `expect_allocations` (Scenario.compares_allocations). What is
deterministic, and so compared for every claim of the scenario:
- whether it is allocated, and the allocation's `nodeSelector` exactly (requirement and
  value order included), node names made scenario-local;
- the devices allocated: (request, driver, pool, device), pools scenario-local;
- the consumers in `status.reservedFor`, by name (uids differ between runs): a pod by
  its name, another consumer (a PodGroup, DRAWorkloadResourceClaims) as
  `<resource>/<name>`, e.g. `podgroups/g`.
Not compared: allocationTimestamp and shareID (a time, a random uid).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from tests.differential.scenario import AllocationTemplate

#: How a real node or pool name becomes scenario-local.
Localize = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class AllocationOutcome:
    #: The claim exists and has status.allocation.
    allocated: bool = False
    #: The allocation's nodeSelector as JSON (keys sorted), node names scenario-local;
    #: "" when the allocation has none.
    node_selector: str = ""
    devices: tuple[tuple[str, str, str, str], ...] = ()
    reserved_for: tuple[str, ...] = ()

    def short(self) -> str:
        if not self.allocated:
            return f"not allocated, reserved for {list(self.reserved_for)}"
        devices = ["/".join(d) for d in self.devices]
        return (
            f"devices {devices}, nodeSelector {self.node_selector or 'none'}, "
            f"reserved for {list(self.reserved_for)}"
        )


def _localized(value: Any, localize: Localize) -> Any:
    """`value` with every string made scenario-local (node names in `values`)."""
    if isinstance(value, str):
        return localize(value)
    if isinstance(value, list):
        return [_localized(v, localize) for v in value]
    if isinstance(value, dict):
        return {k: _localized(v, localize) for k, v in value.items()}
    return value


def selector_text(selector: Mapping[str, Any] | None, localize: Localize) -> str:
    """One spelling of a nodeSelector for comparing: JSON with sorted keys, lists in
    their order, node names scenario-local."""
    if selector is None:
        return ""
    return orjson.dumps(_localized(selector, localize), option=orjson.OPT_SORT_KEYS).decode()


def _consumer(ref: Mapping[str, Any]) -> str:
    name = str(ref.get("name", ""))
    resource = ref.get("resource", "pods")
    return name if resource == "pods" else f"{resource}/{name}"


def read_allocations(
    claims: Iterable[Mapping[str, Any]], localize: Localize
) -> dict[str, AllocationOutcome]:
    """The outcome of every ResourceClaim of one namespace."""
    out = {}
    for c in claims:
        status = c.get("status") or {}
        reserved = tuple(sorted(_consumer(r) for r in status.get("reservedFor") or ()))
        allocation = status.get("allocation")
        if allocation is None:
            out[c["metadata"]["name"]] = AllocationOutcome(reserved_for=reserved)
            continue
        devices = tuple(
            (r["request"], r["driver"], localize(r["pool"]), r["device"])
            for r in (allocation.get("devices") or {}).get("results") or ()
        )
        out[c["metadata"]["name"]] = AllocationOutcome(
            True, selector_text(allocation.get("nodeSelector"), localize), devices, reserved
        )
    return out


def allocation_differences(
    a: Mapping[str, AllocationOutcome], k: Mapping[str, AllocationOutcome]
) -> list[str]:
    """How two runs' claims differ (asched first, kube-scheduler second)."""
    out = []
    for name in sorted(set(a) | set(k)):
        ac, kc = a.get(name, AllocationOutcome()), k.get(name, AllocationOutcome())
        if ac != kc:
            out.append(
                f"claim {name}:\n  asched         {ac.short()}\n  kube-scheduler {kc.short()}"
            )
    return out


def allocation_problems(
    expected: Mapping[str, AllocationTemplate],
    got: Mapping[str, AllocationOutcome],
    local_template: Localize,
) -> list[str]:
    """Where one run's claims contradict the scenario's expect_allocations;
    *local_template* turns `{{node:x}}` into the scenario-local `x`."""
    problems = []
    for name, want in sorted(expected.items()):
        c = got.get(name, AllocationOutcome())
        selector = selector_text(want.node_selector, local_template)
        if (
            not c.allocated
            or c.node_selector != selector
            or set(c.reserved_for) != want.reserved_for
        ):
            problems.append(
                f"expected claim {name} allocated with nodeSelector {selector or 'none'}, "
                f"reserved for {sorted(want.reserved_for)}; got {c.short()}"
            )
    return problems
