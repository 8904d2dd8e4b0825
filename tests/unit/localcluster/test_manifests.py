"""The shipped manifests: the package's copies are the repository's files, the RBAC is least
privilege, and the CRD has the PodGroup API's fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from asched.localcluster.apply import load_manifests
from asched.localcluster.local import PODGROUP_CRD, bundled_manifest

REPO = Path(__file__).resolve().parents[3]
RBAC = REPO / "manifests" / "rbac.yaml"
CRD = REPO / "manifests" / "crds" / f"{PODGROUP_CRD}.yaml"


@pytest.mark.parametrize(
    ("bundled", "source"), [("rbac.yaml", RBAC), (f"{PODGROUP_CRD}.yaml", CRD)]
)
def test_package_data_is_the_repository_manifest(bundled: str, source: Path) -> None:
    assert bundled_manifest(bundled) == source.read_text()


def docs(path: Path) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in load_manifests(path.read_text())}


def named(path: Path, kind: str, name: str) -> dict[str, Any]:
    [doc] = [
        d
        for d in load_manifests(path.read_text())
        if d["kind"] == kind and d["metadata"]["name"] == name
    ]
    return doc


def grants(role: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


@pytest.mark.parametrize(
    ("binding", "role"),
    [("asched", "asched"), ("asched-auth-delegator", "system:auth-delegator")],
)
def test_rbac_binds_user_and_service_account(binding: str, role: str) -> None:
    doc = named(RBAC, "ClusterRoleBinding", binding)
    assert doc["roleRef"]["name"] == role
    assert {(s["kind"], s["name"]) for s in doc["subjects"]} == {
        ("User", "system:asched"),
        ("ServiceAccount", "asched"),
    }


def test_rbac_has_no_wildcards_and_no_writes_beyond_scheduling() -> None:
    g = grants(docs(RBAC)["ClusterRole"])
    assert not any("*" in item for item in g)
    writes = {(grp, res, verb) for grp, res, verb in g if verb not in ("get", "list", "watch")}
    assert writes == {
        ("", "events", "create"),
        ("", "events", "patch"),
        ("", "events", "update"),
        ("events.k8s.io", "events", "create"),
        ("events.k8s.io", "events", "patch"),
        ("events.k8s.io", "events", "update"),
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "update"),
        ("", "pods", "delete"),
        ("", "pods/binding", "create"),
        ("", "bindings", "create"),
        ("", "pods/status", "patch"),
        ("", "pods/status", "update"),
        ("scheduling.x-k8s.io", "podgroups", "update"),
        ("scheduling.x-k8s.io", "podgroups", "patch"),
        ("scheduling.x-k8s.io", "podgroups/status", "update"),
        ("scheduling.x-k8s.io", "podgroups/status", "patch"),
        # Native PodGroups: only their status (the PodGroupInitiallyScheduled condition).
        ("scheduling.k8s.io", "podgroups/status", "update"),
        ("scheduling.k8s.io", "podgroups/status", "patch"),
        # DRA claims: the finalizer, then allocation and reservation (kube-scheduler's role).
        *(
            ("resource.k8s.io", res, verb)
            for res in ("resourceclaims", "resourceclaims/status", "resourceclaims/binding")
            for verb in ("patch", "update")
        ),
        # The claim of a pod's extended resources backed by DRA (DRAExtendedResource).
        ("resource.k8s.io", "resourceclaims", "create"),
        ("resource.k8s.io", "resourceclaims", "delete"),
        # VolumeBinding's PreBind: a PV's claimRef, a claim's selected-node annotation.
        ("", "persistentvolumes", "patch"),
        ("", "persistentvolumes", "update"),
        ("", "persistentvolumeclaims", "patch"),
        ("", "persistentvolumeclaims", "update"),
    }


@pytest.mark.parametrize(
    ("group", "resource"),
    [
        ("", "nodes"),
        ("", "pods"),
        ("", "namespaces"),
        ("", "services"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("policy", "poddisruptionbudgets"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csistoragecapacities"),
        ("scheduling.x-k8s.io", "podgroups"),
    ],
)
def test_rbac_can_watch_what_the_scheduler_caches(group: str, resource: str) -> None:
    g = grants(docs(RBAC)["ClusterRole"])
    assert {(group, resource, v) for v in ("get", "list", "watch")} <= g


def test_leases_are_limited_by_name() -> None:
    rules = docs(RBAC)["ClusterRole"]["rules"]
    update = [r for r in rules if "leases" in r["resources"] and "update" in r["verbs"]]
    assert [r.get("resourceNames") for r in update] == [["asched"]]


def test_podgroup_crd_schema() -> None:
    crd = yaml.safe_load(CRD.read_text())
    assert crd["metadata"]["name"] == PODGROUP_CRD
    assert crd["spec"]["names"]["shortNames"] == ["pg", "pgs"]
    (version,) = crd["spec"]["versions"]
    assert version["name"] == "v1alpha1"
    assert version["storage"] is True
    assert version["subresources"] == {"status": {}}
    props = version["schema"]["openAPIV3Schema"]["properties"]
    spec = props["spec"]["properties"]
    assert spec["minMember"]["format"] == "int32"
    assert spec["scheduleTimeoutSeconds"]["format"] == "int32"
    assert spec["minResources"]["additionalProperties"]["x-kubernetes-int-or-string"] is True
    assert set(props["status"]["properties"]) == {
        "phase",
        "occupiedBy",
        "scheduled",
        "running",
        "succeeded",
        "failed",
        "scheduleStartTime",
    }
