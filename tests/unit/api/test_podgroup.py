"""Decoding PodGroups (scheduling.x-k8s.io/v1alpha1) and deciding pod membership."""

from __future__ import annotations

from typing import Any

import pytest

from asched.api import DecodeError
from asched.api.podgroup import (
    VOLCANO_GROUP_ANNOTATION,
    ObjectRef,
    PodGroupStatus,
    decode_podgroup,
    pod_group_key,
    pod_group_name,
)
from tests.builders import make_pod, make_pod_group


def test_decode_full_object() -> None:
    raw = (
        make_pod_group("train", "ml")
        .min_member(4)
        .min_resources(cpu="8", memory="16Gi")
        .min_resource("nvidia.com/gpu", "4")
        .timeout(30)
        .status(
            phase="Scheduling",
            scheduled=2,
            running=1,
            succeeded=0,
            failed=0,
            scheduleStartTime="2026-01-01T00:00:05Z",
        )
        .raw()
    )
    pg = decode_podgroup(raw)
    assert (pg.key, pg.min_member, pg.schedule_timeout_seconds) == ("ml/train", 4, 30)
    assert pg.creation_timestamp == 1767225600.0
    assert (pg.min_resources.milli_cpu, pg.min_resources.memory) == (8000, 16 * 2**30)
    assert pg.min_resources.scalar == {"nvidia.com/gpu": 4}
    assert pg.status == PodGroupStatus("Scheduling", 2, 1, 0, 0, "2026-01-01T00:00:05Z")
    assert pg.ref() == ObjectRef("PodGroup", "ml", "train", pg.uid, "scheduling.x-k8s.io/v1alpha1")


def test_decode_minimal_object_has_defaults() -> None:
    pg = decode_podgroup({"metadata": {"name": "g", "namespace": "d"}})
    assert (pg.min_member, pg.schedule_timeout_seconds) == (0, None)
    assert pg.min_resources.is_zero()
    assert pg.status == PodGroupStatus()


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        pytest.param({"minMember": -1}, "spec.minMember", "must be >= 0, got -1", id="negative"),
        pytest.param(
            {"minMember": "3"},
            "spec.minMember",
            "expected an integer, got '3'",
            id="string-min-member",
        ),
        pytest.param(
            {"scheduleTimeoutSeconds": 1.5},
            "spec.scheduleTimeoutSeconds",
            "expected an integer, got 1.5",
            id="float-timeout",
        ),
        pytest.param(
            {"minResources": {"cpu": "lots"}},
            "spec.minResources.cpu",
            "quantity 'lots' is not a valid Kubernetes quantity",
            id="bad-quantity",
        ),
        pytest.param(
            {"minResources": ["cpu"]},
            "spec.minResources",
            "expected a ResourceList object",
            id="not-a-map",
        ),
    ],
)
def test_decode_errors_name_the_field(spec: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(DecodeError) as err:
        decode_podgroup({"metadata": {"name": "g", "namespace": "d"}, "spec": spec})
    assert (err.value.kind, err.value.key, err.value.field) == ("PodGroup", "d/g", field)
    assert err.value.message == message


@pytest.mark.parametrize(
    ("builder", "name", "key"),
    [
        pytest.param(make_pod("p"), "", "", id="no-group"),
        pytest.param(make_pod("p", "ns").pod_group("g"), "g", "ns/g", id="label"),
        pytest.param(
            make_pod("p").annotation(VOLCANO_GROUP_ANNOTATION, "v"),
            "v",
            "default/v",
            id="volcano-annotation",
        ),
        pytest.param(
            make_pod("p").pod_group("g").annotation(VOLCANO_GROUP_ANNOTATION, "v"),
            "g",
            "default/g",
            id="label-wins",
        ),
    ],
)
def test_pod_membership(builder: Any, name: str, key: str) -> None:
    pod = builder.obj()
    assert (pod_group_name(pod), pod_group_key(pod)) == (name, key)
