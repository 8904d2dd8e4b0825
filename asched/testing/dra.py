"""resource.k8s.io/v1 objects for tests, as raw manifests (decode them for unit tests,
create them on a cluster for integration and differential tests)."""

from __future__ import annotations

from typing import Any

from asched.api.dra import API_VERSION


def device_class(name: str, *selectors: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in selectors]},
    }


def device(
    name: str, attributes: dict[str, Any] | None = None, capacity: dict[str, str] | None = None
) -> dict[str, Any]:
    """A device; attribute values are typed by their Python type (str: string)."""
    attrs: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "string"
        attrs[key] = {kind: value}
    out: dict[str, Any] = {"name": name}
    if attrs:
        out["attributes"] = attrs
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return out


def resource_slice(
    name: str,
    node: str,
    devices: list[dict[str, Any]],
    *,
    driver: str = "gpu.example.com",
    pool: str = "",
    generation: int = 1,
    slice_count: int = 1,
) -> dict[str, Any]:
    """A slice of `node`'s devices (pool defaults to the node's name)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {
                "name": pool or node,
                "generation": generation,
                "resourceSliceCount": slice_count,
            },
            "devices": devices,
        },
    }


def shared_slice(
    name: str,
    devices: list[dict[str, Any]],
    *,
    pool: str,
    all_nodes: bool = False,
    node_selector: dict[str, Any] | None = None,
    driver: str = "gpu.example.com",
) -> dict[str, Any]:
    """A slice of devices not local to one node: for all nodes, for the nodes a selector
    matches, or, with neither, each device naming its nodes (perDeviceNodeSelection)."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
        "devices": devices,
    }
    if all_nodes:
        spec["allNodes"] = True
    elif node_selector is not None:
        spec["nodeSelector"] = node_selector
    else:
        spec["perDeviceNodeSelection"] = True
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def match_expressions(*requirements: tuple[str, str, list[str]]) -> dict[str, Any]:
    """A one-term NodeSelector of label requirements `(key, operator, values)`."""
    exprs = [
        {"key": k, "operator": op, **({"values": values} if values else {})}
        for k, op, values in requirements
    ]
    return {"nodeSelectorTerms": [{"matchExpressions": exprs}]}


def device_request(
    name: str,
    device_class_name: str,
    *selectors: str,
    count: int | None = None,
    mode: str | None = None,
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class_name}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if mode is not None:
        exactly["allocationMode"] = mode
    if count is not None:
        exactly["count"] = count
    return {"name": name, "exactly": exactly}


def claim_spec(*requests: dict[str, Any]) -> dict[str, Any]:
    return {"devices": {"requests": list(requests)}}


def resource_claim(
    name: str, *requests: dict[str, Any], namespace: str = "default"
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": claim_spec(*requests),
    }


def resource_claim_template(
    name: str, *requests: dict[str, Any], namespace: str = "default"
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim_spec(*requests)},
    }
