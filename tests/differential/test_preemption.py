"""Preemption end to end, through asched and through kube-scheduler (the same assertions).

Three full nodes of low-priority pods (PriorityClass `low`, 10), 2 CPU each:
- guarded: two 1-CPU pods protected by a PodDisruptionBudget that allows no disruption;
- single:  a 1500m pod and a 500m pod (evicting the big one is enough);
- many:    four 500m pods (two would have to go).
A 1-CPU pod of PriorityClass `high` (1000) arrives. Every node can be made to fit, so
the choice is pickOneNodeForPreemption's: no PDB violation rules out `guarded`, then the
lowest sum of victim priorities (one victim rather than two) picks `single`, and on it
the 500m pod is reprieved. So: exactly the 1500m pod is deleted and gets a Preempted
event, the preemptor carries status.nominatedNodeName=single, then is bound to it.

The PDB's status is written by the test: the local control plane runs no disruption
controller (kube-controller-manager runs only namespace, garbage-collector and pod-GC
controllers), and both schedulers read only `status.disruptionsAllowed`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from tests.builders import make_pod
from tests.differential.cluster_objects import HIGH, LOW, ensure_cluster_objects
from tests.differential.schedulers import ASCHED, KUBE, Side, run_scheduler
from tests.integration.conftest import NodeFactory, unique
from tests.integration.helpers import poll

LABEL = "preemption-test"
PREEMPTOR = "preemptor"

#: node -> [(pod, cpu, app label)]
VICTIMS: dict[str, list[tuple[str, str, str]]] = {
    "guarded": [("g1", "1", "guarded"), ("g2", "1", "guarded")],
    "single": [("s-big", "1500m", "free"), ("s-small", "500m", "free")],
    "many": [(f"m{i}", "500m", "free") for i in range(4)],
}


async def _pdb_guarding(admin: ClusterClient, ns: str) -> None:
    path = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    pdb = await admin.post(
        path,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "guard"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}},
        },
    )
    # What the disruption controller would compute: 2 healthy, 2 required, none to spare.
    await admin.patch(
        f"{path}/guard/status",
        {
            "status": {
                "observedGeneration": pdb["metadata"].get("generation", 1),
                "currentHealthy": 2,
                "desiredHealthy": 2,
                "expectedPods": 2,
                "disruptionsAllowed": 0,
            }
        },
    )


async def _watch_preemptor(admin: ClusterClient, ns: str, seen: list[str]) -> str:
    """Record every nominatedNodeName of the preemptor until it is bound; return its node."""
    params: dict[str, str | int | bool] = {
        "fieldSelector": f"metadata.name={PREEMPTOR}",
        "timeoutSeconds": 120,
    }
    async with admin.watch(f"/api/v1/namespaces/{ns}/pods", params=params) as events:
        async for event in events:
            pod = event["object"]
            nominated = pod.get("status", {}).get("nominatedNodeName")
            if nominated and nominated not in seen:
                seen.append(nominated)
            if pod["spec"].get("nodeName"):
                node: str = pod["spec"]["nodeName"]
                return node
    raise AssertionError("the watch ended before the preemptor was bound")


async def _events(admin: ClusterClient, ns: str, reason: str) -> list[dict[str, Any]]:
    body = await admin.get(
        f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
        params={"fieldSelector": f"reason={reason}"},
    )
    items: list[dict[str, Any]] = body["items"]
    return items


@pytest.mark.parametrize("scheduler", [ASCHED, KUBE])
async def test_preemption_evicts_fewest_unprotected_victims_and_binds_nominated_node(
    scheduler: str,
    *,
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    await ensure_cluster_objects(admin)
    side = Side(scheduler, unique("pe"))
    names = await kwok_nodes([NodeSpec(n, cpu="2", labels={LABEL: namespace}) for n in VICTIMS])
    node_of = dict(zip(VICTIMS, names, strict=True))
    pods = f"/api/v1/namespaces/{namespace}/pods"
    for node, victims in VICTIMS.items():
        for name, cpu, app in victims:
            body = (
                make_pod(name, namespace).cpu(cpu).label("app", app).node(node_of[node]).manifest()
            )
            body["spec"]["priorityClassName"] = LOW
            await admin.post(pods, body)
    await _pdb_guarding(admin, namespace)
    preemptor = (
        make_pod(PREEMPTOR, namespace)
        .cpu("1")
        .scheduler(side.scheduler_name("default"))
        .node_selector({LABEL: namespace})
        .manifest()
    )
    preemptor["spec"]["priorityClassName"] = HIGH

    nominated: list[str] = []

    async def victims_gone() -> set[str] | None:
        left = {p["metadata"]["name"] for p in await admin.list(pods)}
        return left if "s-big" not in left else None

    async def preempted() -> list[dict[str, Any]] | None:
        return await _events(admin, namespace, "Preempted") or None

    # The scheduler keeps running until its events are written: kube-scheduler's event
    # broadcaster is asynchronous, and stopping it right after the binding loses them.
    async with run_scheduler(side, cluster, tmp_path):
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                bound: list[str] = []

                async def watch() -> None:
                    bound.append(await _watch_preemptor(admin, namespace, nominated))

                tg.start_soon(watch)
                await anyio.sleep(0.2)  # the watch is open before the pod exists
                created = await admin.post(pods, preemptor)

        assert nominated == [node_of["single"]]
        assert bound == [node_of["single"]]
        with anyio.fail_after(30):
            left = await poll(victims_gone, interval=0.2)
        everyone = {name for victims in VICTIMS.values() for name, _, _ in victims}
        assert left == (everyone - {"s-big"}) | {PREEMPTOR}
        with anyio.fail_after(30):
            events = await poll(preempted, interval=0.2)
    assert [(e["regarding"]["name"], e["type"], e["note"]) for e in events] == [
        (
            "s-big",
            "Normal",
            f"Preempted by pod {created['metadata']['uid']} on node {node_of['single']}",
        )
    ]
