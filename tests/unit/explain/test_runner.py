"""explain_pod against an in-memory API server: the whole command minus the network."""

from __future__ import annotations

import pytest

from asched.config import default_config, load_config
from asched.explain.runner import ExplainError, explain_pod, pod_path
from asched.plugins.registry import in_tree_registry
from tests.builders import make_node, make_pod, make_pod_group
from tests.unit.explain.fakes import FakeKube

REGISTRY = in_tree_registry()
GANG_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: gang
    plugins:
      multiPoint: {enabled: [{name: Coscheduling}]}
      queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
"""


def cluster(*pods: dict[str, object]) -> FakeKube:
    kube = FakeKube()
    kube.add(
        "/api/v1/nodes",
        make_node("small").capacity(cpu="2").raw(),
        make_node("big").capacity(cpu="16").raw(),
    )
    kube.add("/api/v1/pods", *pods)
    for p in pods:
        meta = p["metadata"]
        kube.objects[pod_path(meta["namespace"], meta["name"])] = p  # type: ignore[index]
    return kube


async def test_explains_a_pending_pod_without_writing() -> None:
    kube = cluster(make_pod("p", "ns").cpu("4").raw())
    out = await explain_pod(kube, "ns", "p", default_config(REGISTRY), REGISTRY)
    assert out.pod == "ns/p"
    assert out.profile == "default-scheduler"
    assert {n.node: n.verdict.plugin for n in out.nodes} == {"small": "NodeResourcesFit", "big": ""}
    assert out.selected == "big"
    assert kube.writes == []


async def test_a_bound_pod_is_explained_as_pending() -> None:
    # Bound to small, where it only fits if its own request is not counted twice.
    kube = cluster(make_pod("p", "ns").cpu("2").node("small").raw())
    out = await explain_pod(kube, "ns", "p", default_config(REGISTRY), REGISTRY)
    assert out.bound_to == "small"
    assert sorted(out.feasible) == ["big", "small"]


async def test_plugins_get_their_stores_listed_once() -> None:
    group = make_pod_group("g", "ns").min_member(3).raw()
    member = make_pod("m0", "ns").scheduler("gang").pod_group("g").raw()
    kube = cluster(member)
    kube.add("/apis/scheduling.x-k8s.io/v1alpha1/podgroups", group)
    out = await explain_pod(kube, "ns", "m0", load_config(GANG_CONFIG, REGISTRY), REGISTRY)
    # One member of three exists: the gang is not ready, and Coscheduling says so.
    assert out.gate is not None
    assert out.gate.plugin == "Coscheduling"
    assert out.pre_filter is not None
    assert out.pre_filter.plugin == "Coscheduling"
    listed = [p for m, p in kube.requests if m == "GET"]
    assert listed.count("/apis/scheduling.x-k8s.io/v1alpha1/podgroups") == 1
    assert kube.writes == []


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        (None, "pod ns/q not found"),
        (
            make_pod("p", "ns").scheduler("elsewhere").raw(),
            "schedulerName 'elsewhere' matches no profile",
        ),
    ],
    ids=["missing", "no-profile"],
)
async def test_errors(pod: dict[str, object] | None, want: str) -> None:
    kube = cluster(*([pod] if pod else []))
    kube.missing.add(pod_path("ns", "q"))
    with pytest.raises(ExplainError, match=want):
        await explain_pod(
            kube, "ns", "q" if pod is None else "p", default_config(REGISTRY), REGISTRY
        )
