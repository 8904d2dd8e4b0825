"""Pod requests as component-helpers resource.PodRequests computes them for
kube-scheduler v1.37.2 (framework.PodInfo.CalculateResource's options): pod-level
resources with hugepages, in-place resize status, the scoring defaults."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asched.api import podrequests
from asched.api.pod import decode_pod
from asched.api.podrequests import PodRequests, pod_requests

GI = 1024**3
MI = 1024**2


def _pod(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": "p", "uid": "u"},
        "spec": spec,
        "status": status or {},
    }


def _c(name: str, requests: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": "img", **extra}
    if requests is not None:
        body["resources"] = {"requests": requests}
    return body


def test_pod_level_hugepages_replace_the_containers_value() -> None:
    # IsSupportedPodLevelResource: cpu, memory and hugepages-*; other names stay the
    # containers' sum.
    pod = decode_pod(
        _pod(
            {
                "containers": [
                    _c("c", {"cpu": "100m", "hugepages-1Gi": "1Gi", "example.com/x": "2"})
                ],
                "resources": {
                    "requests": {"hugepages-2Mi": "2Gi", "cpu": "1", "example.com/x": "5"}
                },
            }
        )
    )
    assert pod.requests.milli_cpu == 1000
    assert pod.requests.scalar == {"hugepages-2Mi": 2 * GI, "hugepages-1Gi": GI, "example.com/x": 2}


def test_pod_level_set_keeps_container_defaults_only_for_missing_names() -> None:
    # getNonMissingContainerRequests: with pod-level requests set, the 100m default only
    # applies when no container (nor the pod level) names cpu at all.
    set_cpu = decode_pod(
        _pod(
            {
                "containers": [_c("a", {"cpu": "200m"}), _c("b")],
                "resources": {"requests": {"memory": "1Gi"}},
            }
        )
    )
    assert set_cpu.non_zero_requests.milli_cpu == 200
    assert set_cpu.non_zero_requests.memory == GI
    no_cpu = decode_pod(
        _pod({"containers": [_c("a"), _c("b")], "resources": {"requests": {"memory": "1Gi"}}})
    )
    assert no_cpu.non_zero_requests.milli_cpu == 200  # 100m per container
    plain = decode_pod(_pod({"containers": [_c("a", {"cpu": "200m"}), _c("b")]}))
    assert plain.non_zero_requests.milli_cpu == 300
    assert plain.non_zero_requests.memory == 400 * MI


@pytest.mark.parametrize(
    ("status", "cpu"),
    [
        # No status: the spec.
        ({}, 1000),
        # Resize down not actuated yet: the kubelet still runs it with 2 CPUs.
        ({"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}, 2000),
        # Allocated above spec (resize up admitted), not actuated.
        ({"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "3"}}]}, 3000),
        # Below the spec: the spec (max of the three).
        ({"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "500m"}}]}, 1000),
        # Infeasible resize: the spec is dropped, status counts.
        (
            {
                "conditions": [
                    {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
                ],
                "containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "500m"}}],
            },
            500,
        ),
        # Deferred resize: the spec still counts.
        (
            {
                "conditions": [
                    {"type": "PodResizePending", "status": "True", "reason": "Deferred"}
                ],
                "containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "500m"}}],
            },
            1000,
        ),
        # Pod-level status maps replace the per-container status sums.
        (
            {
                "allocatedResources": {"cpu": "4"},
                "resources": {"requests": {"cpu": "250m"}},
                "containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "9"}}],
            },
            4000,
        ),
    ],
)
def test_in_place_resize_counts_the_max_of_spec_and_status(
    status: dict[str, Any], cpu: int
) -> None:
    pod = decode_pod(_pod({"containers": [_c("c", {"cpu": "1"})]}, status))
    assert pod.requests.milli_cpu == cpu


def test_infeasible_resize_without_status_counts_nothing() -> None:
    # containerAllocatedRequests / containerActuatedRequests return nil when infeasible
    # and the container has no status.
    status = {"conditions": [{"type": "PodResizePending", "reason": "Infeasible"}]}
    pod = decode_pod(_pod({"containers": [_c("c", {"cpu": "1"})]}, status))
    assert pod.requests.milli_cpu == 0


def test_init_container_status_is_found_by_name() -> None:
    spec = {
        "containers": [_c("c", {"cpu": "1"})],
        "initContainers": [_c("side", {"cpu": "1"}, restartPolicy="Always")],
    }
    status = {"initContainerStatuses": [{"name": "side", "allocatedResources": {"cpu": "2"}}]}
    assert decode_pod(_pod(spec, status)).requests.milli_cpu == 3000


def test_pod_level_requests_max_with_pod_level_status() -> None:
    spec = {"containers": [_c("c", {"cpu": "1"})], "resources": {"requests": {"cpu": "2"}}}
    status = {"resources": {"requests": {"cpu": "3"}}}
    assert decode_pod(_pod(spec, status)).requests.milli_cpu == 3000


def test_image_volumes_are_images() -> None:
    pod = decode_pod(
        _pod(
            {
                "containers": [_c("c")],
                "initContainers": [{"name": "i", "image": "init"}],
                "volumes": [
                    {"name": "v", "image": {"reference": "data:v1"}},
                    {"name": "e", "emptyDir": {}},
                ],
            }
        )
    )
    assert sorted(pod.images) == ["data:v1", "img", "init"]


# ---- the shortcut when the status follows the spec ------------------------------------

_QUANTITIES = st.sampled_from(["100m", "250m", "1", "2", "128Mi", "1Gi", "3"])
_REQUESTS = st.none() | st.dictionaries(
    st.sampled_from(["cpu", "memory", "ephemeral-storage", "example.com/gpu"]),
    _QUANTITIES,
    max_size=3,
)


@st.composite
def _pods(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """Containers and init containers (some sidecars) whose statuses report nothing, the
    spec's requests again, or other requests; sometimes an infeasible resize, pod-level
    requests or overhead."""
    spec: dict[str, Any] = {"containers": [], "initContainers": []}
    statuses: dict[str, list[dict[str, Any]]] = {
        "containerStatuses": [],
        "initContainerStatuses": [],
    }
    for kind, status_key, count in (
        ("containers", "containerStatuses", draw(st.integers(1, 3))),
        ("initContainers", "initContainerStatuses", draw(st.integers(0, 2))),
    ):
        for i in range(count):
            name = f"{kind}-{i}"
            requests = draw(_REQUESTS)
            extra = {"restartPolicy": "Always"} if draw(st.booleans()) else {}
            spec[kind].append(_c(name, requests, **extra))
            shape = draw(st.sampled_from(["none", "same", "other", "allocated-only"]))
            if shape == "none":
                continue
            reported = requests if shape != "other" else draw(_REQUESTS)
            cs: dict[str, Any] = {"name": name, "allocatedResources": reported}
            if shape != "allocated-only":
                cs["resources"] = {"requests": reported}
            statuses[status_key].append(cs)
    status: dict[str, Any] = {k: v for k, v in statuses.items() if v}
    if draw(st.booleans()):
        status["conditions"] = [{"type": "PodResizePending", "reason": "Infeasible"}]
    if draw(st.booleans()):
        spec["resources"] = {"requests": {"cpu": "2", "memory": "1Gi"}}
    if draw(st.booleans()):
        spec["overhead"] = {"cpu": "50m"}
    return spec, status


@given(_pods())
def test_the_shortcut_for_a_status_that_follows_the_spec_changes_nothing(
    pod: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    spec, status = pod
    fast = PodRequests(spec, status)
    full = PodRequests(spec, status)
    full.status_follows_spec = False  # always the three aggregations
    assert fast.requests_and_non_zero() == full.requests_and_non_zero()


def test_a_pending_pod_and_a_kubelet_echoing_its_requests_take_the_shortcut() -> None:
    spec = {"containers": [_c("a", {"cpu": "1"})]}
    assert PodRequests(spec, {}).status_follows_spec
    echoed = {
        "name": "a",
        "allocatedResources": {"cpu": "1"},
        "resources": {"requests": {"cpu": "1"}},
    }
    assert PodRequests(spec, {"containerStatuses": [echoed]}).status_follows_spec
    resized = {**echoed, "allocatedResources": {"cpu": "2"}}
    assert not PodRequests(spec, {"containerStatuses": [resized]}).status_follows_spec


# ---- remembered requests of pods that only have containers' requests -------------------


@given(_pods(), st.booleans(), st.booleans())
def test_remembered_requests_are_what_the_full_computation_says(
    pod: tuple[dict[str, Any], dict[str, Any]], no_inits: bool, plain: bool
) -> None:
    spec, status = pod
    if no_inits:
        spec = {k: v for k, v in spec.items() if k != "initContainers"}
    if plain:  # the shape a pending pod has: nothing in its status, nothing pod-level
        spec = {k: v for k, v in spec.items() if k not in ("resources", "overhead")}
        status = {}
    full = PodRequests(spec, status).requests_and_non_zero()
    first, again = pod_requests(spec, status), pod_requests(spec, status)
    assert first == full
    assert again == full
    # Each caller gets its own objects: changing one pod's requests changes no other's.
    assert again[0] is not first[0]
    assert again[0].scalar is not first[0].scalar
    again[0].milli_cpu += 1
    assert pod_requests(spec, status) == full


def test_only_pods_of_containers_requests_alone_are_remembered() -> None:
    plain = {"containers": [_c("a", {"cpu": "100m", "memory": "500Mi"}), _c("b")]}
    podrequests._SIMPLE.clear()
    pod_requests(plain, {"phase": "Running", "containerStatuses": [{"name": "a"}]})
    assert list(podrequests._SIMPLE) == [((("cpu", "100m"), ("memory", "500Mi")), None)]
    for spec, status in (
        ({**plain, "initContainers": [_c("i")]}, {}),
        ({**plain, "overhead": {"cpu": "1"}}, {}),
        ({**plain, "resources": {"requests": {"cpu": "1"}}}, {}),
        (plain, {"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "1"}}]}),
        (plain, {"conditions": [{"type": "PodResizePending", "reason": "Infeasible"}]}),
        ({"containers": [_c("a", {"cpu": 1})]}, {}),  # not a string: judged in full
    ):
        podrequests._SIMPLE.clear()
        assert pod_requests(spec, status) == PodRequests(spec, status).requests_and_non_zero()
        assert not podrequests._SIMPLE


def test_requests_that_do_not_parse_are_refused_every_time() -> None:
    spec = {"containers": [_c("a", {"cpu": "lots"})]}
    for _ in range(2):
        with pytest.raises(ValueError, match="cpu"):
            pod_requests(spec, {})
