"""Where a DRA allocation may be used: the node selector the allocator writes into the
claim (structured/internal/incubating createNodeSelector).

Each case allocates one claim for every device of its slices on one node and asserts the
allocation's `nodeSelector` exactly as it is written to the API (binding.allocation_json),
so the order of requirements and values is checked too. The expected selectors are Go's
rule: the node's name as soon as one device is node-local or binds to its node; else the
merged requirements of the devices' node selectors (the slice's, or the device's own with
perDeviceNodeSelection); else none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from asched.api.dra import decode_device_class, decode_resource_claim, decode_resource_slice
from asched.plugins.dynamicresources.allocator import AllocationError, Allocator
from asched.plugins.dynamicresources.binding import allocation_json
from asched.plugins.dynamicresources.tracker import AllocatedState
from asched.testing import dra

NODE = "n1"
LABELS = {"rack": "r1", "zone": "a", "fabric": "ib"}
RACK_R1 = dra.match_expressions(("rack", "In", ["r1"]))
ZONE_A = dra.match_expressions(("zone", "In", ["a"]))


def on_node(name: str, node: str = NODE) -> dict[str, Any]:
    return {**dra.device(name), "nodeName": node}


def everywhere(name: str) -> dict[str, Any]:
    return {**dra.device(name), "allNodes": True}


def selected(name: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {**dra.device(name), "nodeSelector": selector}


def binding(name: str) -> dict[str, Any]:
    """A device that binds to the node it is allocated for (bindsToNode)."""
    return {**dra.device(name), "bindsToNode": True, "bindingConditions": ["ready"]}


def node_local(pool: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return dra.resource_slice(f"{pool}-slice", NODE, list(devices), pool=pool)


def all_nodes(pool: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return dra.shared_slice(f"{pool}-slice", list(devices), pool=pool, all_nodes=True)


def by_selector(pool: str, selector: dict[str, Any], *devices: dict[str, Any]) -> dict[str, Any]:
    return dra.shared_slice(f"{pool}-slice", list(devices), pool=pool, node_selector=selector)


def per_device(pool: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return dra.shared_slice(f"{pool}-slice", list(devices), pool=pool)


def node_name_selector(node: str = NODE) -> dict[str, Any]:
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    return {"nodeSelectorTerms": [{"matchFields": [field]}]}


def expressions(*requirements: tuple[str, str, list[str]]) -> dict[str, Any]:
    return dra.match_expressions(*requirements)


@dataclass(frozen=True)
class Case:
    id: str
    slices: list[dict[str, Any]]
    # The allocation's nodeSelector as written; None: the field is absent.
    want: dict[str, Any] | None
    # Allocation.node_name: the node the allocation is bound to.
    bound: str = ""
    labels: dict[str, str] = field(default_factory=lambda: dict(LABELS))


CASES = [
    Case(
        "node-local slice",
        [node_local("a", dra.device("d0"))],
        node_name_selector(),
        bound=NODE,
    ),
    Case(
        "nodeSelector slice",
        [by_selector("a", RACK_R1, dra.device("d0"))],
        expressions(("rack", "In", ["r1"])),
    ),
    Case("allNodes slice", [all_nodes("a", dra.device("d0"))], None),
    Case(
        "per-device nodeName",
        [per_device("a", on_node("d0"))],
        node_name_selector(),
        bound=NODE,
    ),
    Case(
        "per-device nodeSelector",
        [per_device("a", selected("d0", ZONE_A))],
        expressions(("zone", "In", ["a"])),
    ),
    Case("per-device allNodes", [per_device("a", everywhere("d0"))], None),
    Case(
        "per-device: a device for all nodes and one by selector",
        [per_device("a", everywhere("d0"), selected("d1", ZONE_A))],
        expressions(("zone", "In", ["a"])),
    ),
    Case(
        "per-device: a node-local device wins over selectors",
        [per_device("a", selected("d0", ZONE_A), on_node("d1"), everywhere("d2"))],
        node_name_selector(),
        bound=NODE,
    ),
    Case(
        "allNodes and nodeSelector slices",
        [all_nodes("a", dra.device("d0")), by_selector("b", RACK_R1, dra.device("d1"))],
        expressions(("rack", "In", ["r1"])),
    ),
    Case(
        "nodeSelector and node-local slices",
        [by_selector("a", RACK_R1, dra.device("d0")), node_local("b", dra.device("d1"))],
        node_name_selector(),
        bound=NODE,
    ),
    Case(
        "a device for all nodes that binds to its node",
        [all_nodes("a", binding("d0"))],
        node_name_selector(),
        bound=NODE,
    ),
    Case(
        "two selectors merge into one term, in device order",
        [by_selector("a", ZONE_A, dra.device("d0")), by_selector("b", RACK_R1, dra.device("d1"))],
        expressions(("zone", "In", ["a"]), ("rack", "In", ["r1"])),
    ),
    Case(
        "a requirement repeated with its values reordered is added once, as first seen",
        [
            by_selector("a", dra.match_expressions(("rack", "In", ["r2", "r1"])), dra.device("d0")),
            by_selector("b", dra.match_expressions(("rack", "In", ["r1", "r2"])), dra.device("d1")),
            per_device("c", selected("d2", RACK_R1)),
        ],
        expressions(("rack", "In", ["r2", "r1"]), ("rack", "In", ["r1"])),
    ),
    Case(
        "same key, other operator: both kept",
        [
            by_selector("a", dra.match_expressions(("fabric", "Exists", [])), dra.device("d0")),
            by_selector("b", dra.match_expressions(("fabric", "In", ["ib"])), dra.device("d1")),
        ],
        expressions(("fabric", "Exists", []), ("fabric", "In", ["ib"])),
    ),
    Case(
        "matchFields and matchExpressions merge separately",
        [
            by_selector(
                "a",
                {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}
                            ]
                        }
                    ]
                },
                dra.device("d0"),
            ),
            by_selector("b", RACK_R1, dra.device("d1")),
        ],
        {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}],
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}
                    ],
                }
            ]
        },
    ),
]


def allocate(slices: list[dict[str, Any]], labels: dict[str, str]) -> Any:
    """One claim for every device of the slices, allocated on NODE."""
    count = sum(len(s["spec"]["devices"]) for s in slices)
    cls = decode_device_class(dra.device_class("any"))
    claim = decode_resource_claim(
        dra.resource_claim("c", dra.device_request("nic", "any", count=count))
    )
    allocator = Allocator(
        {"any": cls}.get, AllocatedState(), [decode_resource_slice(s) for s in slices]
    )
    result = allocator.allocate(NODE, labels, [claim])
    assert result is not None, "the claim must fit"
    assert len(result[0].results) == count
    return result[0]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocation_node_selector(case: Case) -> None:
    allocation = allocate(case.slices, case.labels)
    written = allocation_json(allocation)
    assert written.get("nodeSelector") == case.want
    assert allocation.node_name == case.bound
    # What Filter reads back for the next pod sharing the claim: the node it was made
    # for always matches.
    if allocation.node_selector is not None:
        assert allocation.node_selector.matches(case.labels, NODE)


def test_nodeselector_slice_allocation_is_usable_on_every_node_of_the_rack() -> None:
    """The issue's setup: a rack's NIC allocated for n2 serves a pod on n1 too."""
    allocation = allocate([by_selector("nics", RACK_R1, dra.device("nic-0"))], {"rack": "r1"})
    selector = allocation.node_selector
    assert selector is not None
    assert selector.matches({"rack": "r1"}, "n1")
    assert selector.matches({"rack": "r1"}, "n2")
    assert not selector.matches({"rack": "r2"}, "n3")


def test_node_selector_of_several_terms_is_an_error() -> None:
    """Go: `create NodeSelector for claim c: unsupported ResourceSlice.NodeSelector with 2
    terms` (API validation keeps such slices out; the allocator still refuses them)."""
    two_terms = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        ]
    }
    with pytest.raises(
        AllocationError,
        match=r"^create NodeSelector for claim c: unsupported ResourceSlice.NodeSelector "
        r"with 2 terms$",
    ):
        allocate([by_selector("a", two_terms, dra.device("d0"))], LABELS)
