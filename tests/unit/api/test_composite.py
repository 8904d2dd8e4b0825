"""Decoding scheduling.k8s.io/v1alpha3 CompositePodGroups and a PodGroup's parent: every
bad object names its kind, key and field."""

from __future__ import annotations

from typing import Any

import pytest

from asched.api import DecodeError
from asched.api.composite import decode_composite_podgroup
from asched.api.workload import DISRUPTION_SINGLE
from tests.builders import make_composite_pod_group, make_native_pod_group


def test_gang_composite_decodes() -> None:
    cpg = make_composite_pod_group("cg", "ns").min_group_count(2).parent("top").priority(7).obj()
    assert (cpg.key, cpg.parent, cpg.min_group_count, cpg.priority) == ("ns/cg", "top", 2, 7)
    assert (cpg.topology_key, cpg.disruption_mode, cpg.template_name) == (
        "",
        DISRUPTION_SINGLE,
        "cg",
    )
    assert cpg.ref().kind == "CompositePodGroup"
    assert cpg.ref().api_version == "scheduling.k8s.io/v1alpha3"


def test_basic_root_composite_decodes() -> None:
    cpg = make_composite_pod_group("cg").basic().topology("rack").obj()
    assert (cpg.parent, cpg.min_group_count, cpg.topology_key) == ("", None, "rack")


def test_pod_group_names_its_parent() -> None:
    assert make_native_pod_group("g").parent("cg").obj().parent == "cg"
    assert make_native_pod_group("g").obj().parent == ""


def _bad(mutate: Any) -> dict[str, Any]:
    raw = make_composite_pod_group("cg", "ns").raw()
    mutate(raw["spec"])
    return raw


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        pytest.param(
            _bad(lambda s: s.update(schedulingPolicy={})), "spec.schedulingPolicy", id="no-policy"
        ),
        pytest.param(
            _bad(lambda s: s.update(schedulingPolicy={"gang": {"minGroupCount": 0}})),
            "spec.schedulingPolicy.gang.minGroupCount",
            id="zero-min-group-count",
        ),
        pytest.param(
            _bad(lambda s: s.update(parentCompositePodGroupName="")),
            "spec.parentCompositePodGroupName",
            id="empty-parent",
        ),
        pytest.param(
            _bad(lambda s: s.update(priority="high")), "spec.priority", id="priority-not-int"
        ),
    ],
)
def test_bad_composite_names_the_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(DecodeError) as exc:
        decode_composite_podgroup(raw)
    assert (exc.value.kind, exc.value.key, exc.value.field) == ("CompositePodGroup", "ns/cg", field)
