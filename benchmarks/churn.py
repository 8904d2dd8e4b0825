"""Cluster churn while a scheduler works: scheduler_perf's SchedulingWithMixedChurn.

kube-scheduler's test/integration/scheduler_perf/misc/performance-config.yaml runs a
`churn` op in `recreate` mode next to the measured pods: every interval it deletes the
objects it made last time and creates one each of
- a node with no pod slots (templates/churn/node-default.yaml: `pods: "0"`, Ready),
- a high-priority pod asking 9 CPUs (templates/pod-high-priority-large-cpu.yaml), which
  fits no 4-CPU node, so the scheduler fails it and runs preemption for it every time,
- a Service (templates/churn/service-default.yaml).
So the scheduler keeps receiving node, pod and service events, requeues, and failed
cycles with PostFilter while it binds the measured pods. The pod carries the scheduler's
name, so each scheduler pays for its own churn pods.
"""

from __future__ import annotations

import secrets

import anyio
import structlog

from asched.localcluster import ApiError, ClusterClient, JsonObject, NodeSpec, build_node_manifest

log = structlog.get_logger(__name__)

NODES_PATH = "/api/v1/nodes"
PRIORITY_CLASS = "bench-churn-high"
PRIORITY = 10
_PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


def churn_pod(name: str, scheduler_name: str) -> JsonObject:
    """pod-high-priority-large-cpu.yaml; the priority comes from a PriorityClass because
    the Priority admission plugin refuses a bare spec.priority."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler_name,
            "priorityClassName": PRIORITY_CLASS,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"containerPort": 80}],
                    "resources": {"requests": {"cpu": "9", "memory": "500Mi"}},
                }
            ],
        },
    }


def churn_service(name: str) -> JsonObject:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "selector": {"app": "foo"},
            "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}],
        },
    }


def churn_node(name: str) -> JsonObject:
    return build_node_manifest(NodeSpec(name, pods=0))


async def ensure_priority_class(admin: ClusterClient) -> None:
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": PRIORITY_CLASS},
        "value": PRIORITY,
    }
    try:
        await admin.post(_PRIORITY_CLASSES, body)
    except ApiError as err:
        if err.status != 409:  # made by an earlier run of this cluster
            raise


class Churn:
    """Recreates one node, pod and Service every `interval` seconds until cancelled."""

    def __init__(
        self, admin: ClusterClient, namespace: str, scheduler_name: str, interval: float = 1.0
    ) -> None:
        self._admin = admin
        self._ns = namespace
        self._scheduler = scheduler_name
        self._interval = interval
        self._live: list[str] = []  # paths of what exists now (or may)
        # Unique per run, so no name can meet one left by an earlier run in the cluster.
        self._tag = secrets.token_hex(3)
        self.rounds = 0

    async def run(self) -> None:
        try:
            while True:
                await self._delete_live()
                await self._create(self.rounds)
                self.rounds += 1
                await anyio.sleep(self._interval)
        finally:
            with anyio.CancelScope(shield=True):
                await self._delete_live()
                log.info("churn_done", rounds=self.rounds)

    async def _create(self, i: int) -> None:
        name = f"churn-{self._scheduler}-{self._tag}-{i:05d}"
        pods = f"/api/v1/namespaces/{self._ns}/pods"
        services = f"/api/v1/namespaces/{self._ns}/services"
        for collection, body in (
            (NODES_PATH, churn_node(name)),
            (pods, churn_pod(name, self._scheduler)),
            (services, churn_service(name)),
        ):
            # Listed before the POST: a run cancelled while the POST is in flight may
            # still have created the object, and the cleanup must delete it (a 404 is
            # fine). Recorded after, such a node outlived its run and the next run of
            # the same scheduler failed on 409 AlreadyExists for it.
            self._live.append(f"{collection}/{name}")
            await self._admin.post(collection, body)

    async def _delete_live(self) -> None:
        while self._live:
            # Forgotten only once deleted: a run resumed after a failed delete (the soak
            # runs this loop through control-plane faults) deletes it again.
            path = self._live[-1]
            try:
                await self._admin.delete(path, params={"gracePeriodSeconds": "0"})
            except ApiError as err:
                if err.status != 404:
                    raise
            self._live.pop()
