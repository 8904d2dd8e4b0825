"""The deployment files agree with each other and with the code they deploy.

manifests/, the Dockerfile and the Grafana dashboard repeat facts that live elsewhere: the
config format (asched.config), the CLI flags and ops port (asched.cli), the Lease name the
RBAC allows, the UID the image runs as, the metric names (asched.metrics). A drift in any
of them deploys a scheduler that cannot start, cannot renew its Lease, fails its probes or
draws empty panels, so each fact is checked here without a cluster. Rendering with
kustomize and applying to an API server is tests/integration/test_operations.py's job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from asched.cli import build_parser
from asched.config import load_config
from asched.metrics import Metrics
from asched.plugins.registry import in_tree_registry
from asched.server.authz import PathAllowList

ROOT = Path(__file__).parents[2]
MANIFESTS = ROOT / "manifests"
DASHBOARD = MANIFESTS / "grafana" / "asched-dashboard.json"
CONFIG_FILE = MANIFESTS / "config" / "asched-config.yaml"

Obj = dict[str, Any]


@cache
def _kustomization() -> Obj:
    doc: Obj = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    return doc


@cache
def _objects() -> tuple[Obj, ...]:
    """Every object the kustomization lists as a resource (generators excluded)."""
    docs: list[Obj] = []
    for rel in _kustomization()["resources"]:
        docs += [d for d in yaml.safe_load_all((MANIFESTS / rel).read_text()) if d]
    return tuple(docs)


def _one(kind: str, name: str) -> Obj:
    [obj] = [o for o in _objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    found: Obj = obj
    return found


def _generator(name: str) -> Obj:
    [gen] = [g for g in _kustomization()["configMapGenerator"] if g["name"] == name]
    found: Obj = gen
    return found


def _deployment() -> Obj:
    return _one("Deployment", "asched")


def _pod_spec() -> Obj:
    spec: Obj = _deployment()["spec"]["template"]["spec"]
    return spec


def _container() -> Obj:
    [container] = _pod_spec()["containers"]
    found: Obj = container
    return found


@cache
def _run_args() -> Any:
    c = _container()
    assert c["command"] == ["asched"]
    return build_parser().parse_args(c["args"])


@cache
def _config() -> Any:
    return load_config(CONFIG_FILE, in_tree_registry())


def _lease_rule_names() -> list[str]:
    role = _one("ClusterRole", "asched")
    names: list[str] = []
    for rule in role["rules"]:
        if "leases" in rule["resources"] and "update" in rule["verbs"]:
            names += rule.get("resourceNames", [])
    return names


# ---- kustomization ----------------------------------------------------------------------


def test_every_file_the_kustomization_names_exists() -> None:
    files = list(_kustomization()["resources"])
    for gen in _kustomization()["configMapGenerator"]:
        files += [f.partition("=")[2] or f for f in gen["files"]]
    missing = [f for f in files if not (MANIFESTS / f).is_file()]
    assert not missing


def test_kustomization_holds_what_a_deployment_needs() -> None:
    kinds = {(o["kind"], o["metadata"]["name"]) for o in _objects()}
    assert {
        ("Namespace", "asched"),
        ("ServiceAccount", "asched"),
        ("ClusterRole", "asched"),
        ("ClusterRoleBinding", "asched"),
        ("ClusterRoleBinding", "asched-auth-delegator"),
        ("Deployment", "asched"),
        ("Service", "asched"),
        ("CustomResourceDefinition", "podgroups.scheduling.x-k8s.io"),
    } <= kinds
    assert _generator("asched-grafana-dashboard")["options"]["labels"]["grafana_dashboard"]


# ---- the scheduler config ---------------------------------------------------------------


def test_config_loads_cleanly_with_the_in_tree_plugins() -> None:
    config = _config()
    assert config.warnings == ()
    assert [p.scheduler_name for p in config.profiles] == ["asched", "custom-scheduler"]
    args = config.profile("custom-scheduler").plugin_args["NodeAffinity"]
    assert (args.label_key, args.label_value) == ("node-type", "gpu")


def test_config_leader_election_matches_rbac_and_namespace() -> None:
    le = _config().leader_election
    assert le.leader_elect
    assert le.resource_lock == "leases"
    assert le.resource_name in _lease_rule_names()
    assert le.resource_namespace == _deployment()["metadata"]["namespace"]


# ---- the Deployment ---------------------------------------------------------------------

_SECURITY: list[tuple[str, Callable[[], Any], Any]] = [
    ("replicas", lambda: _deployment()["spec"]["replicas"], 2),
    ("service-account", lambda: _pod_spec()["serviceAccountName"], "asched"),
    ("pod-non-root", lambda: _pod_spec()["securityContext"]["runAsNonRoot"], True),
    (
        "pod-seccomp",
        lambda: _pod_spec()["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault",
    ),
    ("no-escalation", lambda: _container()["securityContext"]["allowPrivilegeEscalation"], False),
    ("read-only-root", lambda: _container()["securityContext"]["readOnlyRootFilesystem"], True),
    ("drop-all-caps", lambda: _container()["securityContext"]["capabilities"]["drop"], ["ALL"]),
    (
        "container-seccomp",
        lambda: _container()["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault",
    ),
    ("liveness-path", lambda: _container()["livenessProbe"]["httpGet"]["path"], "/livez"),
    ("readiness-path", lambda: _container()["readinessProbe"]["httpGet"]["path"], "/readyz"),
    ("liveness-https", lambda: _container()["livenessProbe"]["httpGet"]["scheme"], "HTTPS"),
    ("readiness-https", lambda: _container()["readinessProbe"]["httpGet"]["scheme"], "HTTPS"),
    ("serves-https", lambda: _run_args().insecure_serving, False),
    ("has-limits", lambda: sorted(_container()["resources"]["limits"]), ["cpu", "memory"]),
    ("has-requests", lambda: sorted(_container()["resources"]["requests"]), ["cpu", "memory"]),
]


@pytest.mark.parametrize(
    ("get", "want"), [(g, w) for _, g, w in _SECURITY], ids=[i for i, _, _ in _SECURITY]
)
def test_deployment_settings(get: Callable[[], Any], want: Any) -> None:
    assert get() == want


def test_deployment_runs_leader_elected_with_the_mounted_config() -> None:
    args = _run_args()
    assert args.command == "run"
    assert args.leader_elect is True
    [mount] = [
        m for m in _container()["volumeMounts"] if args.config.is_relative_to(m["mountPath"])
    ]
    [volume] = [v for v in _pod_spec()["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == "asched-config"
    files = _generator("asched-config")["files"]
    assert (
        f"{args.config.relative_to(mount['mountPath'])}={CONFIG_FILE.relative_to(MANIFESTS)}"
        in files
    )


def test_lease_namespace_follows_the_pod() -> None:
    assert _run_args().lease_namespace == "$(POD_NAMESPACE)"
    [env] = [e for e in _container()["env"] if e["name"] == "POD_NAMESPACE"]
    assert env["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"


def test_probes_and_service_reach_the_ops_port() -> None:
    ports = {p["name"]: p["containerPort"] for p in _container()["ports"]}
    assert ports["metrics"] == _run_args().secure_port == 10259
    for probe in ("livenessProbe", "readinessProbe"):
        assert ports[_container()[probe]["httpGet"]["port"]] == 10259
    service = _one("Service", "asched")
    [port] = service["spec"]["ports"]
    assert (port["name"], port["port"], port["targetPort"]) == ("metrics", 10259, "metrics")
    labels = _deployment()["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_probes_need_no_token() -> None:
    """The kubelet sends no credentials: the probe paths must be always-allowed."""
    allowed = PathAllowList(_run_args().authorization_always_allow_paths)
    for probe in ("livenessProbe", "readinessProbe"):
        assert allowed.allows(_container()[probe]["httpGet"]["path"])
    assert not allowed.allows("/metrics")


def test_service_says_https_to_scrapers() -> None:
    annotations = _one("Service", "asched")["metadata"]["annotations"]
    assert annotations["prometheus.io/scheme"] == "https"


def test_delegated_authn_authz_is_the_auth_delegator_role_for_the_same_subjects() -> None:
    delegator = _one("ClusterRoleBinding", "asched-auth-delegator")
    assert delegator["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:auth-delegator",
    }
    assert delegator["subjects"] == _one("ClusterRoleBinding", "asched")["subjects"]


def test_no_other_binding_grants_asched_more() -> None:
    bindings = [o for o in _objects() if o["kind"] in ("ClusterRoleBinding", "RoleBinding")]
    assert sorted(b["roleRef"]["name"] for b in bindings) == ["asched", "system:auth-delegator"]
    # asched's own role does not grant the review APIs (the delegator role does) nor
    # any non-resource URL.
    for rule in _one("ClusterRole", "asched")["rules"]:
        assert "nonResourceURLs" not in rule
        assert not {"tokenreviews", "subjectaccessreviews"} & set(rule.get("resources", []))


def test_metrics_reader_example_allows_get_on_metrics_only() -> None:
    docs = [
        d
        for d in yaml.safe_load_all((MANIFESTS / "examples" / "metrics-reader.yaml").read_text())
        if d
    ]
    [role] = [d for d in docs if d["kind"] == "ClusterRole"]
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    [binding] = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


def test_service_account_is_the_one_rbac_binds() -> None:
    ns = _deployment()["metadata"]["namespace"]
    sa = _one("ServiceAccount", _pod_spec()["serviceAccountName"])
    assert sa["metadata"]["namespace"] == ns
    binding = _one("ClusterRoleBinding", "asched")
    assert {"kind": "ServiceAccount", "name": "asched", "namespace": ns} in binding["subjects"]


# ---- the image --------------------------------------------------------------------------


def _dockerfile_lines() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _final_stage() -> list[str]:
    lines = _dockerfile_lines()
    last_from = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    return lines[last_from:]


def test_image_user_is_the_deployments_uid() -> None:
    [user] = [line.split()[1] for line in _final_stage() if line.startswith("USER ")]
    uid, _, gid = user.partition(":")
    for ctx in (_pod_spec()["securityContext"], _container()["securityContext"]):
        assert (str(ctx["runAsUser"]), str(ctx["runAsGroup"])) == (uid, gid)


def test_image_is_multi_stage_and_runs_asched() -> None:
    stages = [line for line in _dockerfile_lines() if line.startswith("FROM ")]
    assert len(stages) == 2
    final = _final_stage()
    assert 'ENTRYPOINT ["asched"]' in final
    assert 'CMD ["run"]' in final
    assert not [line for line in final if "pip install" in line or "apt-get" in line]


# ---- the dashboard ----------------------------------------------------------------------

_METRIC = re.compile(r"\b((?:scheduler|asched)_[a-z_]+)\b")
_BY = re.compile(r"\bby \(([^)]*)\)")
# Labels Prometheus adds when it scrapes; the exposition never carries them.
_TARGET_LABELS = {"job", "instance"}


def _queries() -> dict[str, str]:
    """Panel title and refId -> PromQL."""
    dashboard = json.loads(DASHBOARD.read_text())
    return {
        f"{p['title']}/{t['refId']}": t["expr"] for p in dashboard["panels"] for t in p["targets"]
    }


def _exprs() -> list[str]:
    return list(_queries().values())


@cache
def _exposed_series() -> dict[str, set[str]]:
    """Series name -> label names, from a Metrics that has seen one of everything."""
    m = Metrics(process_metrics=False)
    m.observe_attempt("scheduled", "asched", 0.01)
    m.observe_algorithm(0.005)
    m.pod_scheduled(1, 0.2)
    m.extension_point("Filter", "Success", "asched", 0.001)
    m.set_pending({"active": 1})
    m.goroutines("binding", 1)
    m.loop_lag(0.001)
    m.preemption_attempt()
    m.preemption_victims(1)
    series: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(m.render().decode()):
        for sample in family.samples:
            series.setdefault(sample.name, set()).update(sample.labels)
    return series


@pytest.mark.parametrize(
    "metric",
    [
        "scheduler_schedule_attempts_total",
        "scheduler_scheduling_attempt_duration_seconds_bucket",
        "scheduler_pending_pods",
        "scheduler_framework_extension_point_duration_seconds_bucket",
        "scheduler_goroutines",
        "asched_event_loop_lag_seconds_bucket",
        "scheduler_preemption_attempts_total",
    ],
)
def test_dashboard_charts(metric: str) -> None:
    assert any(metric in expr for expr in _exprs())


@pytest.mark.parametrize("expr", list(_queries().values()), ids=list(_queries()))
def test_dashboard_query_names_exposed_series_and_labels(expr: str) -> None:
    [metric] = set(_METRIC.findall(expr))  # one series per query keeps this check exact
    exposed = _exposed_series()
    assert metric in exposed
    for group in _BY.findall(expr):
        labels = {label.strip() for label in group.split(",")} - _TARGET_LABELS
        assert labels <= exposed[metric]


def test_dashboard_identity() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "asched-overview"
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
