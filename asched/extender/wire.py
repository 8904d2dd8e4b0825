"""The JSON of k8s.io/kube-scheduler/extender/v1, both ways.

The Go types carry no json tags, so their fields go on the wire under the Go names
(`Pod`, `NodeNames`, `FailedNodes`, ...), a nil pointer or map as `null`. Requests are
built as bytes around the API server's own JSON of the pod and nodes (kept by
asched.extender.objects), so nothing is re-encoded per call. Answers are read the way
encoding/json reads them: a key matches its field exactly or, failing that, ignoring
case; unknown keys are ignored; a value of the wrong type is an error naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

# extenderv1.MaxExtenderPriority: extenders score 0..10, the scheduler's plugins 0..100.
MAX_EXTENDER_PRIORITY = 10


class WireError(ValueError):
    """An extender's answer that does not decode into the Go type it must be."""


@dataclass(slots=True)
class FilterResult:
    """ExtenderFilterResult. `node_names` is None when the answer had none (the extender
    answered with full `Nodes`, or nothing); `nodes` holds the names of `Nodes.items`."""

    node_names: list[str] | None = None
    nodes: list[str] | None = None
    failed_nodes: dict[str, str] = field(default_factory=dict)
    failed_and_unresolvable: dict[str, str] = field(default_factory=dict)
    error: str = ""


@dataclass(slots=True)
class MetaVictims:
    """extenderv1.MetaVictims: victims by pod UID."""

    pods: list[str]
    num_pdb_violations: int = 0


def _json_list(items: Iterable[bytes]) -> bytes:
    return b"[" + b",".join(items) + b"]"


def extender_args(
    pod: bytes, *, nodes: Sequence[bytes] | None, names: Sequence[str] | None
) -> bytes:
    """ExtenderArgs: the pod, and either the full nodes (a NodeList) or only their names
    (nodeCacheCapable), the other left null."""
    node_list = b"null" if nodes is None else b'{"metadata":{},"items":' + _json_list(nodes) + b"}"
    node_names = b"null" if names is None else orjson.dumps(list(names))
    return b'{"Pod":' + pod + b',"Nodes":' + node_list + b',"NodeNames":' + node_names + b"}"


def binding_args(namespace: str, name: str, uid: str, node: str) -> bytes:
    """ExtenderBindingArgs."""
    return orjson.dumps({"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node})


def preemption_args(
    pod: bytes,
    victims: Mapping[str, tuple[Sequence[bytes], int]] | None,
    meta_victims: Mapping[str, MetaVictims] | None,
) -> bytes:
    """ExtenderPreemptionArgs: victims as full pods, or by UID (nodeCacheCapable)."""
    if victims is None:
        full = b"null"
    else:
        full = (
            b"{"
            + b",".join(
                orjson.dumps(node)
                + b':{"Pods":'
                + _json_list(pods)
                + b',"NumPDBViolations":'
                + str(pdb).encode()
                + b"}"
                for node, (pods, pdb) in victims.items()
            )
            + b"}"
        )
    meta = b"null" if meta_victims is None else orjson.dumps(_encode_meta(meta_victims))
    return (
        b'{"Pod":'
        + pod
        + b',"NodeNameToVictims":'
        + full
        + b',"NodeNameToMetaVictims":'
        + meta
        + b"}"
    )


def _encode_meta(meta: Mapping[str, MetaVictims]) -> dict[str, Any]:
    return {
        node: {"Pods": [{"UID": uid} for uid in v.pods], "NumPDBViolations": v.num_pdb_violations}
        for node, v in meta.items()
    }


# -- answers -------------------------------------------------------------------------------


def _get(obj: Mapping[str, Any], name: str) -> Any:
    """encoding/json's field lookup: the exact key, else one equal ignoring case."""
    if name in obj:
        return obj[name]
    folded = name.casefold()
    for key, value in obj.items():
        if isinstance(key, str) and key.casefold() == folded:
            return value
    return None


def _object(value: Any, what: str) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise WireError(f"json: cannot unmarshal {_kind(value)} into Go value of type {what}")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _str(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WireError(
            f"json: cannot unmarshal {_kind(value)} into Go struct field {what} of type string"
        )
    return value


def _int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        shown = (
            value
            if isinstance(value, int | float) and not isinstance(value, bool)
            else _kind(value)
        )
        raise WireError(
            f"json: cannot unmarshal number {shown} into Go struct field {what} of type int64"
        )
    return value


def _str_list(value: Any, what: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise WireError(
            f"json: cannot unmarshal {_kind(value)} into Go struct field {what} of type []string"
        )
    return [_str(v, what) for v in value]


def _str_map(value: Any, what: str) -> dict[str, str]:
    obj = _object(value, "extenderv1.FailedNodesMap")
    return {} if obj is None else {str(k): _str(v, what) for k, v in obj.items()}


def _load(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise WireError(f"invalid character in extender answer: {exc}") from None


def decode_filter_result(body: bytes) -> FilterResult:
    obj = _object(_load(body), "extenderv1.ExtenderFilterResult") or {}
    nodes = None
    node_list = _object(_get(obj, "Nodes"), "v1.NodeList")
    if node_list is not None:
        items = _get(node_list, "items") or []
        if not isinstance(items, list):
            raise WireError("json: cannot unmarshal into Go struct field NodeList.items")
        nodes = [_node_name(i) for i in items]
    return FilterResult(
        node_names=_str_list(_get(obj, "NodeNames"), "ExtenderFilterResult.NodeNames"),
        nodes=nodes,
        failed_nodes=_str_map(_get(obj, "FailedNodes"), "ExtenderFilterResult.FailedNodes"),
        failed_and_unresolvable=_str_map(
            _get(obj, "FailedAndUnresolvableNodes"),
            "ExtenderFilterResult.FailedAndUnresolvableNodes",
        ),
        error=_str(_get(obj, "Error"), "ExtenderFilterResult.Error"),
    )


def _node_name(item: Any) -> str:
    node = _object(item, "v1.Node") or {}
    meta = _object(_get(node, "metadata"), "v1.ObjectMeta") or {}
    return _str(_get(meta, "name"), "ObjectMeta.name")


def decode_host_priorities(body: bytes) -> list[tuple[str, int]]:
    """HostPriorityList as (host, score) pairs, in the extender's order."""
    value = _load(body)
    if value is None:
        return []
    if not isinstance(value, list):
        raise WireError(
            f"json: cannot unmarshal {_kind(value)} into Go value of type "
            "extenderv1.HostPriorityList"
        )
    out = []
    for item in value:
        obj = _object(item, "extenderv1.HostPriority") or {}
        out.append(
            (
                _str(_get(obj, "Host"), "HostPriority.Host"),
                _int(_get(obj, "Score"), "HostPriority.Score"),
            )
        )
    return out


def decode_binding_result(body: bytes) -> str:
    """ExtenderBindingResult's Error ("" when the bind succeeded)."""
    obj = _object(_load(body), "extenderv1.ExtenderBindingResult") or {}
    return _str(_get(obj, "Error"), "ExtenderBindingResult.Error")


def decode_preemption_result(body: bytes) -> dict[str, MetaVictims | None]:
    """ExtenderPreemptionResult's NodeNameToMetaVictims (None for a node mapped to null)."""
    obj = _object(_load(body), "extenderv1.ExtenderPreemptionResult") or {}
    by_node = (
        _object(_get(obj, "NodeNameToMetaVictims"), "map[string]*extenderv1.MetaVictims") or {}
    )
    out: dict[str, MetaVictims | None] = {}
    for node, raw in by_node.items():
        victims = _object(raw, "extenderv1.MetaVictims")
        if victims is None:
            out[str(node)] = None
            continue
        pods = _get(victims, "Pods") or []
        if not isinstance(pods, list):
            raise WireError("json: cannot unmarshal into Go struct field MetaVictims.Pods")
        out[str(node)] = MetaVictims(
            [
                _str(_get(_object(p, "extenderv1.MetaPod") or {}, "UID"), "MetaPod.UID")
                for p in pods
            ],
            _int(_get(victims, "NumPDBViolations"), "MetaVictims.NumPDBViolations"),
        )
    return out
