"""Decoding scheduling.k8s.io/v1beta1 PodGroups and Workloads, and pods' schedulingGroup:
every bad object names its kind, key and field."""

from __future__ import annotations

from typing import Any

import pytest

from asched.api import DecodeError, decode_pod
from asched.api.workload import (
    DISRUPTION_ALL,
    DISRUPTION_SINGLE,
    PodGroupClaim,
    decode_native_podgroup,
    decode_workload,
)
from tests.builders import make_native_pod_group, make_pod


def test_gang_group_decodes() -> None:
    pg = (
        make_native_pod_group("g", "ns")
        .min_count(4)
        .topology("topology.kubernetes.io/rack")
        .condition("PodGroupInitiallyScheduled", "False", "Unschedulable", "why")
        .obj()
    )
    assert (pg.key, pg.min_count, pg.topology_key, pg.disruption_mode, pg.generation) == (
        "ns/g",
        4,
        "topology.kubernetes.io/rack",
        DISRUPTION_SINGLE,
        1,
    )
    cond = pg.condition("PodGroupInitiallyScheduled")
    assert cond is not None
    assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", "why")
    assert pg.is_gang


def test_basic_group_has_no_min_count() -> None:
    pg = make_native_pod_group("g").basic().obj()
    assert pg.min_count is None
    assert not pg.is_gang


def test_group_resource_claims_decode() -> None:
    """DRAWorkloadResourceClaims: spec.resourceClaims in order, template claims' names."""
    pg = (
        make_native_pod_group("g")
        .resource_claim("shared", claim="c")
        .resource_claim("per-group", template="t")
        .claim_status("per-group", "g-per-group-x7")
        .obj()
    )
    assert pg.resource_claims == (
        PodGroupClaim("shared", claim_name="c"),
        PodGroupClaim("per-group", template_name="t"),
    )
    assert pg.resource_claim_statuses == {"per-group": "g-per-group-x7"}


def test_group_without_resource_claims() -> None:
    pg = make_native_pod_group("g").claim_status("x", None).obj()
    assert (pg.resource_claims, pg.resource_claim_statuses) == ((), {"x": None})


def test_disruption_mode_all() -> None:
    raw = make_native_pod_group("g").raw()
    raw["spec"]["disruptionMode"] = {"all": {}}
    assert decode_native_podgroup(raw).disruption_mode == DISRUPTION_ALL


@pytest.mark.parametrize(
    ("spec", "field", "detail"),
    [
        ({"schedulingPolicy": {}}, "spec.schedulingPolicy", "exactly one of basic and gang"),
        (
            {"schedulingPolicy": {"gang": {"minCount": 0}}},
            "spec.schedulingPolicy.gang.minCount",
            "must be a positive integer, got 0",
        ),
        (
            {"schedulingPolicy": {"gang": {"minCount": "3"}}},
            "spec.schedulingPolicy.gang.minCount",
            "expected an integer, got '3'",
        ),
        (
            {
                "schedulingPolicy": {"basic": {}},
                "schedulingConstraints": {"topology": [{"key": "a"}, {"key": "b"}]},
            },
            "spec.schedulingConstraints.topology",
            "at most one constraint, got 2",
        ),
        (
            {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{}]}},
            "spec.schedulingConstraints.topology[0].key",
            "a node label key is required",
        ),
        (
            {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}, "all": {}}},
            "spec.disruptionMode",
            "exactly one of single and all",
        ),
        (
            {"schedulingPolicy": {"basic": {}}, "resourceClaims": {"name": "c"}},
            "spec.resourceClaims",
            "expected a list",
        ),
        (
            {"schedulingPolicy": {"basic": {}}, "resourceClaims": [{"resourceClaimName": "c"}]},
            "spec.resourceClaims[0].name",
            "a DNS label is required",
        ),
        (
            {
                "schedulingPolicy": {"basic": {}},
                "resourceClaims": [{"name": "c", "resourceClaimName": 3}],
            },
            "spec.resourceClaims[0].resourceClaimName",
            "expected a non-empty name, got 3",
        ),
    ],
)
def test_bad_group_names_the_field(spec: dict[str, Any], field: str, detail: str) -> None:
    raw = make_native_pod_group("g", "ns").raw()
    raw["spec"] = spec
    with pytest.raises(DecodeError) as info:
        decode_native_podgroup(raw)
    err = info.value
    assert (err.kind, err.key, err.field) == ("PodGroup", "ns/g", field)
    assert detail in err.message


def test_workload_templates() -> None:
    raw = {
        "metadata": {"namespace": "ns", "name": "w"},
        "spec": {
            "podGroupTemplates": [
                {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 8}}},
                {"name": "driver", "schedulingPolicy": {"basic": {}}},
            ]
        },
    }
    w = decode_workload(raw)
    assert [(t.name, t.min_count) for t in w.templates] == [("workers", 8), ("driver", None)]


def test_bad_workload_names_the_template_field() -> None:
    raw = {
        "metadata": {"namespace": "ns", "name": "w"},
        "spec": {"podGroupTemplates": [{"name": "x", "schedulingPolicy": {"gang": {}}}]},
    }
    with pytest.raises(DecodeError) as info:
        decode_workload(raw)
    assert (info.value.kind, info.value.field) == (
        "Workload",
        "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount",
    )


def test_pod_scheduling_group() -> None:
    assert make_pod("p").scheduling_group("g").obj().scheduling_group == "g"
    assert make_pod("p").obj().scheduling_group == ""
    raw = make_pod("p").raw()
    raw["spec"]["schedulingGroup"] = {}
    with pytest.raises(DecodeError) as info:
        decode_pod(raw)
    assert info.value.field == "spec.schedulingGroup.podGroupName"
