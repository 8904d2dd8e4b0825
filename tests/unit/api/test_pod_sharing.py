"""Decoding shares what never changes between pods: equal tolerations are one tuple of
Toleration objects, and a pod that needs no node feature gets the one empty set. Fewer
objects per decoded pod version for the garbage collector to walk."""

from __future__ import annotations

import gc
from typing import Any

from asched.api import Toleration, decode_pod
from asched.api import pod as pod_module

DEFAULTS = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]


def _pod(name: str, tolerations: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"metadata": {"namespace": "ns", "name": name, "uid": name}, "spec": spec}


def test_equal_tolerations_are_one_shared_tuple() -> None:
    a = decode_pod(_pod("a", DEFAULTS))
    b = decode_pod(_pod("b", [dict(t) for t in DEFAULTS]))
    assert a.tolerations is b.tolerations
    assert a.tolerations == (
        Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
        Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"),
    )
    # Another order is another list of tolerations, decoded as written.
    c = decode_pod(_pod("c", list(reversed(DEFAULTS))))
    assert c.tolerations == tuple(reversed(a.tolerations))
    assert c.tolerations is not a.tolerations
    # Defaults apply before the key is made: an absent operator is Equal.
    d = decode_pod(_pod("d", [{"key": "k", "value": "v"}]))
    assert d.tolerations == (Toleration("k", "Equal", "v", ""),)
    assert decode_pod(_pod("e", None)).tolerations == ()


def test_the_shared_tolerations_are_bounded() -> None:
    for i in range(pod_module._TOLERATIONS_MAX + 10):
        decode_pod(_pod(f"p{i}", [{"key": f"k{i}", "operator": "Exists"}]))
    assert len(pod_module._TOLERATIONS) <= pod_module._TOLERATIONS_MAX


def test_pods_that_need_no_feature_share_one_empty_set() -> None:
    a = decode_pod(_pod("a", None))
    b = decode_pod(_pod("b", None))
    assert a.required_features == frozenset()
    assert a.required_features is b.required_features


def test_a_decoded_pod_version_leaves_few_tracked_objects() -> None:
    raws = [_pod(f"p{i}", DEFAULTS) for i in range(200)]
    decode_pod(raws[0])  # the shared tolerations exist before counting
    gc.collect()
    before = len(gc.get_objects())
    pods = [decode_pod(r) for r in raws]
    gc.collect()  # untracks tuples of atomic values, as the first young collection does
    per_pod = (len(gc.get_objects()) - before) / len(pods)
    # The Pod and its two Resources; three more were its tolerations and empty set.
    assert per_pod <= 4
