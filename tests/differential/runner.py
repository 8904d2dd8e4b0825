"""One side's run: every scenario through one scheduler process, from setup to cleanup.

Order, and why:
1. Namespaces, objects (PVCs, DRA claims; an object's `status` is written through its
   /status subresource right after it is created), native PodGroups (but those
   `create_after_pods`), existing pods (bound through spec.nodeName) and the pods to
   schedule are all created BEFORE the scheduler starts; an existing pod's scenario
   `status` (in-place resize) is merged in once kwok runs it. The scheduler's first list
   then holds every pod, so its queue orders them by priority (PrioritySort) with no
   creation race. Within one priority kube-scheduler 1.37 follows no fixed order (not
   name, not creation: observed), so scenarios whose outcome depends on it compare
   counts (`interchangeable`). Workloads (StatefulSets) are created last; the run waits
   until kube-controller-manager's PV controller has made the scenario PVs Available and
   the claims created bound Bound, and until the statefulset controller has made every
   replica (storage_run.py). The fake provisioner serves the scenarios' `provision`
   classes of this side while its scheduler runs.
2. The scheduler starts with all profiles; the run waits until every pod to schedule has
   settled (bound with a Scheduled event, or a FailedScheduling event and no pending
   nomination), then until nothing changed for QUIET seconds (retries after backoff can
   still write), bounded by SETTLE_TIMEOUT: an unsettled pod is an outcome, not a crash.
   Pods that wait by design (expect_waiting, or whose PodGroup does not exist yet) are not
   waited for; when a run has any, the settle lasts at least MIN_WAITING seconds, so the
   scheduler has had its chance to write about them.
3. Scenarios with `then` actions (delete or relabel a pod, add a `later` node, set a
   PodGroup's minCount) or `create_after_pods` PodGroups get them now, all at once; their
   pods then have `within` seconds to get bound, and their outcome is read after that.
4. The outcome is read, the raw record written (`<side prefix>-outcomes.json` beside the
   scheduler's log), the scheduler stopped, and the side's pods force-deleted, then its
   PodGroups (finalizer lifted) and `later` nodes; the run returns only once no pod is
   left, so the other side starts from the same cluster state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import anyio
import structlog

from asched.localcluster import ClusterClient, LocalCluster, delete_nodes
from asched.localcluster.provisioner import provisioning
from asched.localcluster.rest import STRATEGIC_MERGE_PATCH
from tests.differential.layout import RUN_LABEL, Placement, run_label
from tests.differential.outcomes import Key, Reads, ScenarioOutcome, Snapshot
from tests.differential.scenario import Action, PodGroupTemplate
from tests.differential.schedulers import Running, Side, run_scheduler
from tests.differential.storage_run import (
    drop_volumes,
    replicas_created,
    unless_gone,
    volumes_settled,
)
from tests.integration.helpers import poll

log = structlog.get_logger(__name__)

SETTLE_TIMEOUT = 90.0
QUIET = 2.0
#: Least settle time (from the scheduler's start) of a run with pods that wait silently.
MIN_WAITING = 8.0
POLL = 0.25
_CONCURRENCY = 16


def _plural(kind: str) -> str:
    """The resource name of a kind: pods, storageclasses, csistoragecapacities."""
    low = kind.lower()
    if low.endswith("y"):
        return low[:-1] + "ies"
    return low + ("es" if low.endswith("s") else "s")


def _api_path(obj: Mapping[str, Any]) -> str:
    """Collection path of a namespaced core or grouped object."""
    ns = obj["metadata"]["namespace"]
    api = obj["apiVersion"]
    plural = _plural(obj["kind"])
    base = f"/api/{api}" if "/" not in api else f"/apis/{api}"
    return f"{base}/namespaces/{ns}/{plural}"


def cluster_path(obj: Mapping[str, Any]) -> str:
    """The collection of a cluster-scoped object: /api/v1/persistentvolumes, ..."""
    api = obj["apiVersion"]
    plural = _plural(obj["kind"])
    return f"/api/{api}/{plural}" if "/" not in api else f"/apis/{api}/{plural}"


async def _create_all(admin: ClusterClient, placements: Sequence[Placement], side: Side) -> None:
    limiter = anyio.Semaphore(_CONCURRENCY)

    async def post(path: str, body: Mapping[str, Any]) -> None:
        async with limiter:
            await admin.post(path, body)
            if body.get("status") and body.get("kind") != "Pod":
                # An object given with a status (a ResourceClaim already allocated): the
                # API ignores status on create, so it is written through /status.
                name = body["metadata"]["name"]
                await admin.patch(f"{path}/{name}/status", {"status": body["status"]})

    async with anyio.create_task_group() as tg:
        for p in placements:
            tg.start_soon(post, "/api/v1/namespaces", {"metadata": {"name": p.namespace(side)}})
    async with anyio.create_task_group() as tg:
        for p in placements:
            for obj in p.cluster_objects(side):
                tg.start_soon(post, cluster_path(obj), obj)
    async with anyio.create_task_group() as tg:
        for p in placements:
            for obj in p.objects(side):
                tg.start_soon(post, _api_path(obj), obj)
            for g in p.scenario.pod_groups:
                if not g.create_after_pods:
                    tg.start_soon(post, p.pod_group_path(side), p.pod_group(g, side))
    async with anyio.create_task_group() as tg:
        for p in placements:
            pods = [p.existing_pod(e, side) for e in p.scenario.existing]
            pods += [p.pod(t, side) for t in p.scenario.pods]
            for body in pods:
                tg.start_soon(post, f"/api/v1/namespaces/{p.namespace(side)}/pods", body)
    async with anyio.create_task_group() as tg:
        for p in placements:
            for e in p.scenario.existing:
                if e.status:
                    tg.start_soon(_patch_status, admin, p.namespace(side), e.name, e.status)
            for w in p.scenario.workloads:
                tg.start_soon(post, p.workload_path(side), p.workload(w, side))
    await volumes_settled(admin, placements, side)
    await replicas_created(admin, placements, side)


async def _patch_status(
    admin: ClusterClient, namespace: str, name: str, status: Mapping[str, Any]
) -> None:
    """Merge *status* into an existing pod's status once kwok has run it: kwok's pod-ready
    stage writes the whole status of a pod it has not started yet."""
    path = f"/api/v1/namespaces/{namespace}/pods/{name}"

    async def running() -> bool | None:
        pod = await admin.get(path)
        return True if (pod.get("status") or {}).get("phase") == "Running" else None

    with anyio.fail_after(30):
        await poll(running, interval=POLL)
    # Strategic merge: conditions merge by type, beside kwok's.
    await admin.patch(
        f"{path}/status", {"status": dict(status)}, content_type=STRATEGIC_MERGE_PATCH
    )


def _waits_silently(p: Placement, pod: str) -> bool:
    """The pod is expected to get no event in the first round: expect_waiting, or its
    PodGroup does not exist (yet)."""
    s = p.scenario
    if pod in s.expect_waiting:
        return True
    template = next(t for t in s.pods if t.name == pod)
    group = (template.body["spec"].get("schedulingGroup") or {}).get("podGroupName")
    if not group:
        return False
    declared = {g.name: g for g in s.pod_groups}
    return group not in declared or declared[group].create_after_pods


def _waiting_for(placements: Sequence[Placement], side: Side) -> list[Key]:
    pods = [
        (p.namespace(side), t.name)
        for p in placements
        for t in p.scenario.pods
        if not t.gated and not t.prebound and not _waits_silently(p, t.name)
    ]
    replicas = [
        (p.namespace(side), name)
        for p in placements
        for w in p.scenario.workloads
        for name in w.replica_names
    ]
    return pods + replicas


def _has_silent(placements: Sequence[Placement]) -> bool:
    return any(_waits_silently(p, t.name) for p in placements for t in p.scenario.pods)


async def _settle(
    admin: ClusterClient,
    run: str,
    side: Side,
    keys: list[Key],
    alive: Running,
    *,
    reads: Reads,
    at_least: float,
) -> Snapshot:
    began = anyio.current_time()
    deadline = began + SETTLE_TIMEOUT
    quiet_since: float | None = None
    last: tuple[object, ...] = ()
    while True:
        alive.check_alive()
        snap = await Snapshot.take(admin, run, side, reads)
        now = anyio.current_time()
        if now > deadline:
            pending = [k for k in keys if not snap.settled(k)]
            log.warning("differential_settle_timeout", side=side.name, pending=pending[:10])
            return snap
        if all(snap.settled(k) for k in keys) and now - began >= at_least:
            fp = snap.fingerprint()
            if fp != last:
                last, quiet_since = fp, now
            elif quiet_since is not None and now - quiet_since >= QUIET:
                return snap
        else:
            quiet_since = None
        await anyio.sleep(POLL)


async def _act_and_wait(
    cluster: LocalCluster,
    admin: ClusterClient,
    run: str,
    side: Side,
    acting: Sequence[Placement],
    *,
    alive: Running,
    reads: Reads,
) -> Snapshot:
    """Apply every `then` action at once (and create the `create_after_pods` PodGroups and
    the `late_objects`),
    then give the pods each scenario's `within` seconds to get bound: the snapshot is
    taken when all are bound or at the deadline, so a pod that waits longer (a missing or
    wrong queueing hint leaves it in the unschedulable pool until the periodic flush)
    counts as not scheduled."""
    limiter = anyio.Semaphore(_CONCURRENCY)

    async def create_group(p: Placement, group: PodGroupTemplate) -> None:
        async with limiter:
            await admin.post(p.pod_group_path(side), p.pod_group(group, side))

    async def create_object(body: Mapping[str, Any]) -> None:
        async with limiter:
            await admin.post(_api_path(body), body)

    async def act(p: Placement, action: Action) -> None:
        path = f"/api/v1/namespaces/{p.namespace(side)}/pods/{action.pod}"
        async with limiter:
            if action.node:
                node = next(n for n in p.scenario.nodes if n.name == action.node)
                await cluster.create_nodes([p.node_spec(node)])
            elif action.group:
                gang = {"gang": {"minCount": action.min_count}}
                await admin.patch(
                    p.pod_group_path(side, action.group), {"spec": {"schedulingPolicy": gang}}
                )
            elif action.delete:
                await admin.delete(path, params={"gracePeriodSeconds": 0})
            else:
                labels: dict[str, Any] = dict(action.labels or {})
                labels[RUN_LABEL] = run_label(run, side)
                # A merge patch of labels: null removes those the action leaves out.
                pod = await admin.get(path)
                for old in pod["metadata"].get("labels") or {}:
                    labels.setdefault(old, None)
                await admin.patch(path, {"metadata": {"labels": labels}})

    async with anyio.create_task_group() as tg:
        for p in acting:
            for action in p.scenario.then:
                tg.start_soon(act, p, action)
            for group in p.scenario.late_groups:
                tg.start_soon(create_group, p, group)
            for body in p.objects(side, late=True):
                tg.start_soon(create_object, body)
    began = anyio.current_time()
    deadline = began + max(p.scenario.within for p in acting)
    keys = [(p.namespace(side), name) for p in acting for name in p.scenario.pod_names]
    while True:
        alive.check_alive()
        snap = await Snapshot.take(admin, run, side, reads)
        if anyio.current_time() >= deadline or all(snap.bound(k) for k in keys):
            log.info(
                "differential_then_done",
                side=side.name,
                seconds=round(anyio.current_time() - began, 1),
            )
            return snap
        await anyio.sleep(POLL)


async def _cleanup(
    admin: ClusterClient, placements: Sequence[Placement], run: str, side: Side
) -> None:
    limiter = anyio.Semaphore(_CONCURRENCY)

    async def drop(p: Placement) -> None:
        ns = p.namespace(side)
        async with limiter:
            # First the workloads, or their controller makes the pods again.
            for w in p.scenario.workloads:
                await unless_gone(admin.delete(p.workload_path(side, w.name)))
            # Nothing runs these pods: force them, or they wait for a kubelet for ever.
            await unless_gone(
                admin.delete(f"/api/v1/namespaces/{ns}/pods", params={"gracePeriodSeconds": 0})
            )
            for obj in p.objects(side):
                # No PVC protection controller runs to lift the finalizer.
                path = f"{_api_path(obj)}/{obj['metadata']['name']}"
                await unless_gone(admin.patch(path, {"metadata": {"finalizers": None}}))
            for g in p.scenario.pod_groups:
                # Nor the PodGroup protection controller (scheduling.k8s.io/podgroup-protection).
                path = p.pod_group_path(side, g.name)
                await unless_gone(admin.patch(path, {"metadata": {"finalizers": None}}))
                await unless_gone(admin.delete(path))
            if p.scenario.workloads or p.scenario.provision:
                await drop_volumes(admin, ns)
            await unless_gone(admin.delete(f"/api/v1/namespaces/{ns}"))
            for obj in p.cluster_objects(side):
                path = f"{cluster_path(obj)}/{obj['metadata']['name']}"
                # No PV protection controller runs to lift kubernetes.io/pv-protection.
                await unless_gone(admin.patch(path, {"metadata": {"finalizers": None}}))
                await unless_gone(admin.delete(path))

    async with anyio.create_task_group() as tg:
        for p in placements:
            tg.start_soon(drop, p)
    selector = {"labelSelector": f"{RUN_LABEL}={run_label(run, side)}"}

    async def all_gone() -> bool | None:
        return None if await admin.list("/api/v1/pods", params=selector) else True

    with anyio.fail_after(60):
        await poll(all_gone, interval=POLL)
    await _drop_claims(admin, [p.namespace(side) for p in placements])
    # Each side's `later` nodes go with its pods: the next side adds them afresh.
    late = [name for p in placements for name in p.late_node_names()]
    if late:
        await delete_nodes(admin, late)

        async def nodes_gone() -> bool | None:
            names = {n["metadata"]["name"] for n in await admin.list("/api/v1/nodes")}
            return None if names & set(late) else True

        with anyio.fail_after(60):
            await poll(nodes_gone, interval=POLL)


async def _drop_claims(admin: ClusterClient, namespaces: Sequence[str]) -> None:
    """DRA claims (the scenarios' and those made from templates) go before the next side
    starts: an allocated claim left behind would hold its device. The scheduler's
    delete-protection finalizer is lifted (the controller that lifts it may be slower)."""
    paths = [f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims" for ns in namespaces]

    async def left() -> list[str]:
        out = []
        for path in paths:
            out += [f"{path}/{c['metadata']['name']}" for c in await admin.list(path)]
        return out

    for path in await left():
        await unless_gone(admin.patch(path, {"metadata": {"finalizers": None}}))
        await unless_gone(admin.delete(path))

    async def gone() -> bool | None:
        return None if await left() else True

    with anyio.fail_after(60):
        await poll(gone, interval=POLL)


async def run_side(
    cluster: LocalCluster,
    admin: ClusterClient,
    placements: Sequence[Placement],
    *,
    run: str,
    side: Side,
    work_dir: Path,
) -> dict[str, ScenarioOutcome]:
    """Every scenario through *side*'s scheduler; outcomes by scenario id."""
    began = anyio.current_time()
    try:
        await _create_all(admin, placements, side)
        created = anyio.current_time()
        acting = [p for p in placements if p.scenario.has_then]
        reads = Reads(
            groups=any(p.scenario.pod_groups for p in placements),
            volumes=any(p.scenario.compares_claims for p in placements),
            resource_claims=any(p.scenario.compares_allocations for p in placements),
        )
        at_least = MIN_WAITING if _has_silent(placements) else 0.0
        # Only this side's classes: a claim of another side is never provisioned.
        classes = {p.cluster_name(side, c) for p in placements for c in p.scenario.provision}
        async with (
            provisioning(admin, classes) if classes else nullcontext(),
            run_scheduler(side, cluster, work_dir) as alive,
        ):
            keys = _waiting_for(placements, side)
            snap = await _settle(admin, run, side, keys, alive, reads=reads, at_least=at_least)
            final = (
                await _act_and_wait(cluster, admin, run, side, acting, alive=alive, reads=reads)
                if acting
                else snap
            )
        settled = anyio.current_time()
        nodes = await admin.list("/api/v1/nodes")
        labels = {n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in nodes}
        outcomes = {
            p.scenario.id: (
                final.scenario_outcome(p, side, labels, first_round=snap)
                if p.scenario.has_then
                else snap.scenario_outcome(p, side, labels)
            )
            for p in placements
        }
        record = {
            p.scenario.id: {
                "first_round": snap.dump(p, side) if p.scenario.has_then else None,
                "final": (final if p.scenario.has_then else snap).dump(p, side),
            }
            for p in placements
        }
        (work_dir / f"{side.prefix}-outcomes.json").write_text(json.dumps(record, indent=1))
    finally:
        with anyio.CancelScope(shield=True):
            await _cleanup(admin, placements, run, side)
    log.info(
        "differential_side_done",
        side=side.name,
        scenarios=len(placements),
        create_s=round(created - began, 1),
        schedule_s=round(settled - created, 1),
        total_s=round(anyio.current_time() - began, 1),
    )
    return outcomes
