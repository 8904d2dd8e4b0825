"""Where each scenario lives in the shared cluster, and its objects as sent to the API.

All scenarios share one cluster and run in one scheduler process per side, so each must
be invisible to the others:
- its nodes carry `diff.asched.io/scenario=<key>` and every pod it schedules gets that
  nodeSelector, so only its own nodes are feasible (both schedulers still see every node,
  hence the same `0/N nodes are available` counts);
- each side runs it in a namespace of its own, which scopes pod (anti-)affinity and
  topology spreading to the scenario's pods;
- node names are unique per run: `<run>-<index>-<local name>`;
- its native PodGroups live in each side's namespace, beside its pods.
The local node names of a scenario are mapped back when outcomes are compared. A `later`
node gets the same name and label, but is created by each side in its `then` phase.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from asched.localcluster import NodeSpec
from tests.differential.claims import PROVISIONED
from tests.differential.scenario import (
    POD_GROUP_API,
    NodeTemplate,
    PodGroupTemplate,
    PodTemplate,
    Scenario,
    SliceTemplate,
    deep_merge,
)
from tests.differential.schedulers import KUBE, Side
from tests.differential.workloads import STATEFULSET_API, WorkloadTemplate

SCENARIO_LABEL = "diff.asched.io/scenario"
RUN_LABEL = "diff.asched.io/run"
_NODE_REF = re.compile(r"\{\{node:([a-z0-9-]+)\}\}")
# A cluster-scoped object's name (a PV, a StorageClass): one copy per side and scenario, so
# one scheduler's bindings never reach the other's run.
_CLUSTER_REF = re.compile(r"\{\{cluster:([a-z0-9-]+)\}\}")


def scenario_local(text: str) -> str:
    """A scenario's text with `{{node:<name>}}` spelled as the local name (what outcomes
    compare with)."""
    return _NODE_REF.sub(lambda m: m.group(1), text)


@dataclass(frozen=True, slots=True)
class Placement:
    """One scenario's names in one harness run (shared by both sides)."""

    scenario: Scenario
    index: int
    run: str

    @property
    def key(self) -> str:
        return f"{self.run}-{self.index:02d}"

    def node_name(self, local: str) -> str:
        return f"{self.key}-{local}"

    def local_node(self, real: str) -> str:
        prefix = f"{self.key}-"
        return real[len(prefix) :] if real.startswith(prefix) else real

    def namespace(self, side: Side) -> str:
        return f"{side.prefix}-{self.index:02d}-{self.scenario.id}"[:63].rstrip("-")

    def node_spec(self, node: NodeTemplate) -> NodeSpec:
        return dataclasses.replace(
            node.spec,
            name=self.node_name(node.name),
            labels={**node.spec.labels, SCENARIO_LABEL: self.key},
        )

    def node_specs(self) -> list[NodeSpec]:
        """The nodes shared by every side (all but the `later` ones)."""
        return [self.node_spec(n) for n in self.scenario.first_nodes]

    def late_node_names(self) -> list[str]:
        return [self.node_name(n.name) for n in self.scenario.nodes if n.later]

    def cluster_name(self, side: Side, name: str) -> str:
        return f"{side.prefix}-{self.index:02d}-{name}"

    def _resolve(self, value: Any, side: Side | None = None) -> Any:
        if isinstance(value, str):
            value = _NODE_REF.sub(lambda m: self.node_name(m.group(1)), value)
            if side is not None:
                value = _CLUSTER_REF.sub(lambda m: self.cluster_name(side, m.group(1)), value)
            return value
        if isinstance(value, list):
            return [self._resolve(v, side) for v in value]
        if isinstance(value, dict):
            return {k: self._resolve(v, side) for k, v in value.items()}
        return value

    def _manifest(self, pod: PodTemplate, side: Side) -> dict[str, Any]:
        body: dict[str, Any] = copy.deepcopy(dict(pod.body))
        if side.name == KUBE:
            deep_merge(body["spec"], pod.kube_spec)
        body = self._resolve(body, side)
        body["metadata"]["namespace"] = self.namespace(side)
        body["metadata"].setdefault("labels", {})[RUN_LABEL] = run_label(self.run, side)
        return body

    def existing_pod(self, pod: PodTemplate, side: Side) -> dict[str, Any]:
        body = self._manifest(pod, side)
        body["spec"]["nodeName"] = self.node_name(pod.node)
        return body

    def pod(self, pod: PodTemplate, side: Side) -> dict[str, Any]:
        body = self._manifest(pod, side)
        body["spec"]["schedulerName"] = side.scheduler_name(self.scenario.profile)
        if not pod.prebound:
            body["spec"].setdefault("nodeSelector", {})[SCENARIO_LABEL] = self.key
        return body

    def objects(self, side: Side, *, late: bool = False) -> list[dict[str, Any]]:
        """This side's copies of the scenario's namespaced objects (`late`: those created
        in the `then` round)."""
        out = []
        for obj in self.scenario.late_objects if late else self.scenario.objects:
            body = self._resolve(copy.deepcopy(dict(obj)), side)
            body.setdefault("metadata", {})["namespace"] = self.namespace(side)
            out.append(body)
        return out

    def cluster_objects(self, side: Side) -> list[dict[str, Any]]:
        """This side's copies of the scenario's cluster-scoped objects."""
        return [self._resolve(copy.deepcopy(dict(o)), side) for o in self.scenario.cluster_objects]

    def workload(self, w: WorkloadTemplate, side: Side) -> dict[str, Any]:
        """This side's copy of a StatefulSet: its replicas go to this side's scheduler, are
        pinned to the scenario's nodes and carry the run label, like the bare pods."""
        body: dict[str, Any] = self._resolve(copy.deepcopy(dict(w.body)), side)
        body["metadata"]["namespace"] = self.namespace(side)
        template = body["spec"]["template"]
        template.setdefault("metadata", {}).setdefault("labels", {})[RUN_LABEL] = run_label(
            self.run, side
        )
        template["spec"]["schedulerName"] = side.scheduler_name(self.scenario.profile)
        template["spec"].setdefault("nodeSelector", {})[SCENARIO_LABEL] = self.key
        return body

    def workload_path(self, side: Side, name: str = "") -> str:
        base = f"/apis/{STATEFULSET_API}/namespaces/{self.namespace(side)}/statefulsets"
        return f"{base}/{name}" if name else base

    def local_volume(self, side: Side, real: str) -> str:
        """The scenario's name for a PV of this side (`{{cluster:x}}` -> x); PROVISIONED
        for a volume the scenario did not declare."""
        prefix = self.cluster_name(side, "")
        return real[len(prefix) :] if real.startswith(prefix) else PROVISIONED

    def resource_slices(self) -> list[dict[str, Any]]:
        """The scenario's ResourceSlices with real node names: a node's slice is one pool
        per (node, driver), with shared counters in a second slice; a `pool` slice is the
        pool `<key>-<pool>`, for all nodes, by node selector, or per device."""
        out = []
        for t in self.scenario.slices:
            devices = [self._resolve(copy.deepcopy(dict(d))) for d in t.devices]
            if t.pool:
                out.append(self._pool_slice(t, devices))
                continue
            node = self.node_name(t.node)
            name = f"{node}-{t.driver.split('.')[0]}"
            count = 2 if t.shared_counters else 1
            out.append(_slice_body(name, t.driver, node, count, devices=devices, nodeName=node))
            if t.shared_counters:
                counter_sets = [
                    {"name": s, "counters": {c: {"value": v} for c, v in counters.items()}}
                    for s, counters in t.shared_counters.items()
                ]
                out.append(
                    _slice_body(
                        f"{name}-counters",
                        t.driver,
                        node,
                        count,
                        sharedCounters=counter_sets,
                        nodeName=node,
                    )
                )
        return out

    def _pool_slice(self, t: SliceTemplate, devices: list[dict[str, Any]]) -> dict[str, Any]:
        pool = f"{self.key}-{t.pool}"
        where: dict[str, Any]
        if t.all_nodes:
            where = {"allNodes": True}
        elif t.node_selector is not None:
            where = {"nodeSelector": self._resolve(copy.deepcopy(dict(t.node_selector)))}
        else:
            where = {"perDeviceNodeSelection": True}
        return _slice_body(
            f"{pool}-{t.driver.split('.')[0]}", t.driver, pool, 1, devices=devices, **where
        )

    def pod_group(self, group: PodGroupTemplate, side: Side) -> dict[str, Any]:
        body = group.manifest()
        body["metadata"]["namespace"] = self.namespace(side)
        body["metadata"]["labels"] = {RUN_LABEL: run_label(self.run, side)}
        return body

    def pod_group_path(self, side: Side, name: str = "") -> str:
        base = f"/apis/{POD_GROUP_API}/namespaces/{self.namespace(side)}/podgroups"
        return f"{base}/{name}" if name else base


def _slice_body(name: str, driver: str, pool: str, count: int, **spec: Any) -> dict[str, Any]:
    """A ResourceSlice of `pool`, one of `count`; `spec` says which nodes it is for."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
            **spec,
        },
    }


def run_label(run: str, side: Side) -> str:
    return f"{run}-{side.prefix}"


def place(scenarios: list[Scenario], run: str) -> list[Placement]:
    return [Placement(s, i, run) for i, s in enumerate(scenarios)]
