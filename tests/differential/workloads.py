"""Workload objects a scenario creates instead of (or beside) bare pods: StatefulSets.

A scenario's `workloads` are apps/v1 StatefulSet manifests. kube-controller-manager's
statefulset controller (the local cluster runs it) creates each replica's claims from
`volumeClaimTemplates` and then the replica pods `<name>-<i>`; the harness gives every
side its own copy, with the template's `schedulerName` set to that side's scheduler, the
scenario's nodeSelector and the run label (layout.Placement.workload), so the replicas
are pods of the run like any other.

The replicas must all exist before the scheduler starts (the harness's rule: the first
list holds every pod), so `podManagementPolicy: Parallel` is required: with OrderedReady
the controller creates replica 1 only once replica 0 runs, which needs a scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STATEFULSET_API = "apps/v1"


class WorkloadError(ValueError):
    """A workload manifest the harness cannot run."""


@dataclass(frozen=True, slots=True)
class WorkloadTemplate:
    """A StatefulSet of a scenario, without namespace and schedulerName."""

    name: str
    replicas: int
    body: Mapping[str, Any]

    @property
    def replica_names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}-{i}" for i in range(self.replicas))

    def claim_names(self) -> tuple[str, ...]:
        """The claims the controller makes, `<template>-<set>-<ordinal>` (the statefulset
        controller's getPersistentVolumeClaimName)."""
        spec = self.body["spec"]
        templates = [t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", ())]
        return tuple(f"{t}-{pod}" for pod in self.replica_names for t in templates)


def parse_workload(raw: Mapping[str, Any], where: str) -> WorkloadTemplate:
    if not isinstance(raw, Mapping):
        raise WorkloadError(f"{where}: must be a StatefulSet manifest")
    if raw.get("apiVersion") != STATEFULSET_API or raw.get("kind") != "StatefulSet":
        raise WorkloadError(f"{where}: only apiVersion {STATEFULSET_API}, kind StatefulSet")
    name = (raw.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name:
        raise WorkloadError(f"{where}.metadata.name: required")
    spec = raw.get("spec") or {}
    replicas = spec.get("replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise WorkloadError(f"{where}.spec.replicas: required, an integer >= 1")
    if spec.get("podManagementPolicy") != "Parallel":
        raise WorkloadError(
            f"{where}.spec.podManagementPolicy: must be Parallel (every replica exists "
            "before the scheduler starts)"
        )
    template_spec = (spec.get("template") or {}).get("spec")
    if not isinstance(template_spec, Mapping):
        raise WorkloadError(f"{where}.spec.template.spec: required")
    if "schedulerName" in template_spec:
        raise WorkloadError(f"{where}: the harness sets the template's schedulerName per side")
    return WorkloadTemplate(name, replicas, dict(raw))
