"""charts/asched: `helm lint`, what `helm template` renders from values, and that the API
server accepts it (`kubectl apply --dry-run=server`).

helm is built from its Go module into the control-plane cache by
hack/controlplane/build.sh, as kubectl is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from asched.app import build_registry
from asched.config import load_config
from asched.localcluster import LocalCluster, find_binaries, load_manifests
from tests.integration.ops_helpers import kubectl

ROOT = Path(__file__).parents[2]
CHART = ROOT / "charts" / "asched"
MANIFESTS = ROOT / "manifests"

Obj = dict[str, Any]


def _helm() -> Path:
    path = find_binaries().dir / "helm"
    if not path.is_file():
        pytest.skip(f"helm is missing from {path.parent}; hack/controlplane/build.sh builds it")
    return path


async def helm(*args: str) -> str:
    result = await anyio.run_process([str(_helm()), *args], check=False)
    if result.returncode != 0:
        pytest.fail(f"helm {' '.join(args)} exited {result.returncode}:\n{result.stderr.decode()}")
    return result.stdout.decode()


async def _render(namespace: str = "asched", *values: str) -> list[Obj]:
    sets = [arg for v in values for arg in ("--set", v)]
    text = await helm("template", "asched", str(CHART), "--namespace", namespace, *sets)
    return load_manifests(text)


def _one(objs: list[Obj], kind: str, name: str) -> Obj:
    [obj] = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


def _args(objs: list[Obj]) -> list[str]:
    args: list[str] = _one(objs, "Deployment", "asched")["spec"]["template"]["spec"]["containers"][
        0
    ]["args"]
    return args


async def test_the_chart_lints() -> None:
    out = await helm("lint", str(CHART))
    assert "0 chart(s) failed" in out


async def test_the_rendered_chart_is_accepted_by_the_api_server(
    cluster: LocalCluster, namespace: str, tmp_path: Path
) -> None:
    text = await helm("template", "asched", str(CHART), "--namespace", namespace, "--include-crds")
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(text)
    out = await kubectl(
        "apply", "--dry-run=server", "-f", str(rendered), kubeconfig=cluster.admin_kubeconfig
    )
    for kind in ("deployment.apps", "clusterrole.rbac.authorization.k8s.io", "configmap"):
        assert f"{kind}/asched" in out, out
    assert "(server dry run)" in out


async def test_the_rbac_is_the_kustomize_base_s() -> None:
    objs = await _render()
    base = [d for d in yaml.safe_load_all((MANIFESTS / "rbac.yaml").read_text()) if d]
    [base_role] = [d for d in base if d["kind"] == "ClusterRole"]
    assert _one(objs, "ClusterRole", "asched")["rules"] == base_role["rules"]
    delegator = _one(objs, "ClusterRoleBinding", "asched-auth-delegator")
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    viewer = _one(objs, "ClusterRole", "asched-inspector-viewer")
    assert viewer["rules"] == [
        {"nonResourceURLs": ["/inspector", "/inspector/*"], "verbs": ["get"]}
    ]


async def test_values_reach_the_config_and_the_deployment() -> None:
    objs = await _render(
        "asched",
        "replicas=1",
        "config.profiles[0].schedulerName=team-a",
        "config.extra.percentageOfNodesToScore=40",
        "inspector.decisions=50",
        "image.tag=9.9.9",
        "resources.limits.cpu=3",
    )
    text = _one(objs, "ConfigMap", "asched-config")["data"]["config.yaml"]
    cfg = load_config(text, build_registry())
    assert [p.scheduler_name for p in cfg.profiles] == ["team-a"]
    assert cfg.percentage_of_nodes_to_score == 40
    assert not cfg.leader_election.leader_elect  # one replica: no election
    deployment = _one(objs, "Deployment", "asched")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert deployment["spec"]["replicas"] == 1
    assert container["image"] == "asched:9.9.9"
    assert container["resources"]["limits"]["cpu"] == 3
    assert "--no-leader-elect" in _args(objs)
    assert "--inspector-decisions=50" in _args(objs)

    default = await _render()
    default_cfg = load_config(
        _one(default, "ConfigMap", "asched-config")["data"]["config.yaml"], build_registry()
    )
    base = load_config(MANIFESTS / "config" / "asched-config.yaml", build_registry())
    assert default_cfg.profiles == base.profiles  # the kustomize base's profiles
    assert "--leader-elect" in _args(default)


async def test_service_monitor_and_dashboard_follow_their_values() -> None:
    default = await _render()
    kinds = {o["kind"] for o in default}
    assert "ServiceMonitor" not in kinds
    dashboard = _one(default, "ConfigMap", "asched-grafana-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = (MANIFESTS / "grafana" / "asched-dashboard.json").read_text()
    assert dashboard["data"]["asched-dashboard.json"] == shipped.rstrip("\n")

    on = await _render("asched", "serviceMonitor.enabled=true", "grafanaDashboard.enabled=false")
    monitor = _one(on, "ServiceMonitor", "asched")
    assert monitor["spec"]["endpoints"][0]["scheme"] == "https"
    assert not [o for o in on if o["metadata"]["name"] == "asched-grafana-dashboard"]
    off = await _render("asched", "inspector.enabled=false")
    assert "--no-inspector" in _args(off)
    assert not [o for o in off if o["metadata"]["name"] == "asched-inspector-viewer"]


def test_the_chart_ships_the_base_s_crd_and_dashboard() -> None:
    for ours, base in (
        ("crds/podgroups.scheduling.x-k8s.io.yaml", "crds/podgroups.scheduling.x-k8s.io.yaml"),
        ("dashboards/asched-dashboard.json", "grafana/asched-dashboard.json"),
    ):
        assert (CHART / ours).read_text() == (MANIFESTS / base).read_text(), ours
