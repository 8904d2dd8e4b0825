"""Kubernetes 1.37's native gangs end to end (issue 11): scheduling.k8s.io/v1beta1 PodGroups,
pods joining through spec.schedulingGroup, asched as a process with its own RBAC.

The local API server serves the API with GenericWorkload on. Each test isolates its nodes
with a label its pods select, and watches every binding from before asched starts, so "no
member was ever bound" is checked against the API server's history, not a final listing.
"""

from __future__ import annotations

from typing import Any

import anyio

from asched.localcluster import ClusterClient, NodeSpec
from tests.builders import make_native_pod_group, make_pod
from tests.integration.conftest import NodeFactory, unique
from tests.integration.gang_helpers import (
    ISOLATION_LABEL,
    Gang,
    kill_between_bindings_then_restart,
    partial_groups,
)
from tests.integration.harness import AschedHarness, profile_config
from tests.integration.helpers import bind, poll
from tests.integration.test_gang import isolated_nodes, watching

PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"


async def _group(admin: ClusterClient, ns: str, name: str, min_count: int) -> None:
    await admin.post(
        PODGROUPS.format(ns=ns), make_native_pod_group(name, ns).min_count(min_count).manifest()
    )


async def _members(
    admin: ClusterClient,
    ns: str,
    group: str,
    count: int,
    *,
    scheduler: str,
    iso: str,
    cpu: str = "1",
    cpu_of: dict[int, str] | None = None,
) -> list[str]:
    names = [f"{group}-{i}" for i in range(count)]
    for i, name in enumerate(names):
        manifest = (
            make_pod(name, ns)
            .scheduler(scheduler)
            .scheduling_group(group)
            .cpu((cpu_of or {}).get(i, cpu))
            .node_selector({ISOLATION_LABEL: iso})
            .manifest()
        )
        await admin.post(f"/api/v1/namespaces/{ns}/pods", manifest)
    return names


async def _condition(admin: ClusterClient, ns: str, group: str) -> dict[str, Any] | None:
    body = await admin.get(f"{PODGROUPS.format(ns=ns)}/{group}")
    for c in body.get("status", {}).get("conditions") or ():
        if c.get("type") == "PodGroupInitiallyScheduled":
            found: dict[str, Any] = c
            return found
    return None


async def _wait_condition(
    admin: ClusterClient, ns: str, group: str, status: str, within: float = 30
) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        c = await _condition(admin, ns, group)
        return c if c is not None and c["status"] == status else None

    with anyio.fail_after(within):
        return await poll(check, interval=0.2)


async def _event_reasons(
    asched: AschedHarness, pod: str, until: str, within: float = 20
) -> list[str]:
    """The reasons of the Events about *pod*, once one with reason *until* is there."""
    await asched.wait_event(pod, until, within, kind="Pod")
    return [e["reason"] for e in await asched.events(pod, "Pod")]


async def test_gang_waits_for_its_group_and_quorum_then_binds_whole(
    asched: AschedHarness,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    iso = await isolated_nodes(kwok_nodes, 2, cpu="4")
    name = unique("native")
    async with (
        watching(admin, namespace) as watch,
        asched.run(profile_config(name)),
    ):
        # Pods first: PreEnqueue holds them until their PodGroup appears...
        pods = await _members(admin, namespace, "g", 2, scheduler=name, iso=iso)
        await anyio.sleep(2)
        assert watch.bound(pods) == []
        # ...and until minCount (3) of them exist.
        await _group(admin, namespace, "g", 3)
        await anyio.sleep(2)
        assert watch.bound(pods) == []
        third = make_pod("g-2", namespace).scheduler(name).scheduling_group("g").cpu("1")
        await admin.post(
            f"/api/v1/namespaces/{namespace}/pods",
            third.node_selector({ISOLATION_LABEL: iso}).manifest(),
        )
        pods.append("g-2")
        await watch.wait_bound(pods, within=30)
        cond = await _wait_condition(admin, namespace, "g", "True")
        group = await admin.get(f"{PODGROUPS.format(ns=namespace)}/g")
        reasons = {pod: await _event_reasons(asched, pod, "Scheduled") for pod in pods}
    generation = group["metadata"].get("generation", 0)
    assert (cond["reason"], cond["message"]) == ("Scheduled", ""), cond
    # metav1.Condition omits observedGeneration 0.
    assert cond.get("observedGeneration", 0) == generation, (cond, group["metadata"])
    # PreEnqueue waits write no FailedScheduling events (Go: a gated pod is not attempted).
    assert reasons == {pod: ["Scheduled"] for pod in pods}


async def test_gang_with_a_member_that_fits_nowhere_binds_none(
    asched: AschedHarness,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    iso = await isolated_nodes(kwok_nodes, 2, cpu="4")
    name = unique("native")
    async with (
        watching(admin, namespace) as watch,
        asched.run(profile_config(name)),
    ):
        await _group(admin, namespace, "big", 3)
        # Member 1 asks for more CPU than any node has: minCount 3 cannot be met.
        pods = await _members(admin, namespace, "big", 3, scheduler=name, iso=iso, cpu_of={1: "8"})
        cond = await _wait_condition(admin, namespace, "big", "False")
        for pod in pods:
            await _event_reasons(asched, pod, "FailedScheduling")
        assert watch.bound(pods) == []
    # kube-scheduler 1.37 with TopologyAwareWorkloadScheduling: one placement (no topology
    # constraint) whose status is PlacementFeasible's, then DefaultPreemption's
    # PodGroupPostFilter finds no pod of lower priority to evict.
    placements = (
        "pod group is unschedulable, 0/1 placements are available, first placement status: "
        "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
    )
    group = (
        f"{placements}, pod group preemption: No preemption victims found for incoming preemptor"
    )
    assert (cond["reason"], cond["message"]) == ("Unschedulable", group)
    # The member that fits nowhere reports its own fit error; the one placed in the
    # simulation reports the group behind errPodGroupUnschedulable; the one never tried
    # reports the group's status as it was before PodGroupPostFilter (Go clones it then).
    notes = {}
    for pod in pods:
        events = await asched.events(pod, "Pod")
        failed = [e["note"] for e in events if e["reason"] == "FailedScheduling"]
        assert failed, pod
        notes[pod] = failed[0]
    assert notes["big-1"].startswith("0/")
    assert "Insufficient cpu" in notes["big-1"]
    assert notes["big-0"] == f"pod group is unschedulable, {group}"
    assert notes["big-2"] == placements


RACK = "topology.kubernetes.io/rack"


async def test_topology_gang_lands_inside_the_one_rack_that_fits_it(
    asched: AschedHarness,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    iso = unique("iso")
    # rack-a: two 4-CPU nodes; rack-b: one. Three 2-CPU members fit only in rack-a.
    racks = {"a0": "rack-a", "a1": "rack-a", "b0": "rack-b"}
    created = await kwok_nodes(
        [NodeSpec(n, cpu="4", labels={ISOLATION_LABEL: iso, RACK: r}) for n, r in racks.items()]
    )
    rack_of = {node: racks[node.rsplit("-", 1)[-1]] for node in created}
    name = unique("native")
    async with (
        watching(admin, namespace) as watch,
        asched.run(profile_config(name)),
    ):
        pg = make_native_pod_group("ring", namespace).min_count(3).topology(RACK)
        await admin.post(PODGROUPS.format(ns=namespace), pg.manifest())
        pods = await _members(admin, namespace, "ring", 3, scheduler=name, iso=iso, cpu="2")
        await watch.wait_bound(pods, within=30)
        # Five members need 10 CPU: no rack holds them, so none is bound.
        big = make_native_pod_group("wide", namespace).min_count(5).topology(RACK)
        await admin.post(PODGROUPS.format(ns=namespace), big.manifest())
        wide = await _members(admin, namespace, "wide", 5, scheduler=name, iso=iso, cpu="1")
        cond = await _wait_condition(admin, namespace, "wide", "False")
        assert watch.bound(wide) == []
    assert {rack_of[watch.node_of[p]] for p in pods} == {"rack-a"}
    assert cond["reason"] == "Unschedulable"
    assert cond["message"].startswith(
        "pod group is unschedulable, 0/2 placements are available, first placement status: "
    )


async def test_sigkill_mid_binding_then_restart_leaves_no_native_gang_partial(
    asched: AschedHarness,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    # 10 nodes x 8 CPU = 80 slots for 68 members: everything fits once placed.
    iso = await isolated_nodes(kwok_nodes, 10, cpu="8")
    listed = await admin.get("/api/v1/nodes", params={"labelSelector": f"{ISOLATION_LABEL}={iso}"})
    node_names = [n["metadata"]["name"] for n in listed["items"]]
    name = unique("nativekill")
    async with watching(admin, namespace) as watch:
        # What a kill between two bindings leaves behind, made deterministic: 3 of the 8
        # members of "pre" bound by a scheduler that then died, 5 pending.
        await _group(admin, namespace, "pre", 8)
        pre = await _members(admin, namespace, "pre", 8, scheduler=name, iso=iso)
        for i, pod in enumerate(pre[:3]):
            await bind(admin, namespace, pod, node_names[i])
        gangs = [Gang("pre", 8, tuple(pre))]
        for i in range(6):
            await _group(admin, namespace, f"k{i}", 10)
            members = await _members(admin, namespace, f"k{i}", 10, scheduler=name, iso=iso)
            gangs.append(Gang(f"k{i}", 10, tuple(members)))
        await watch.wait_bound(pre[:3], within=10)
        # Burst 1: the bindings leave one by one.
        await kill_between_bindings_then_restart(
            asched,
            watch,
            gangs,
            throttled=profile_config(name, qps=5, burst=1),
            config=profile_config(name),
        )
    assert partial_groups(watch, gangs) == {}
    final = {
        p["metadata"]["name"]: p["spec"].get("nodeName")
        for p in (await admin.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
    }
    assert final == watch.node_of


def _job(name: str, scheduler: str, iso: str, parallelism: int, cpu: str) -> dict[str, Any]:
    """A Job asking for gang scheduling (WorkloadWithJob: spec.scheduling; an unset
    minCount defaults to the parallelism)."""
    pod = make_pod("unused").scheduler(scheduler).cpu(cpu).node_selector({ISOLATION_LABEL: iso})
    template = pod.manifest()
    template.pop("apiVersion", None)
    template.pop("kind", None)
    template["metadata"] = {"labels": {"job": name}}
    template["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": template,
            "scheduling": {"schedulingPolicy": {"gang": {}}},
        },
    }


async def test_a_job_with_gang_scheduling_is_placed_whole_or_not_at_all(
    asched: AschedHarness,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    # Two 4-CPU nodes: four 2-CPU workers fit, five do not.
    iso = await isolated_nodes(kwok_nodes, 2, cpu="4")
    name = unique("native")
    async with (
        watching(admin, namespace) as watch,
        asched.run(profile_config(name)),
    ):
        await admin.post(
            f"/apis/batch/v1/namespaces/{namespace}/jobs", _job("fits", name, iso, 4, "2")
        )

        async def workers(job: str, count: int) -> list[dict[str, Any]] | None:
            body = await admin.get(
                f"/api/v1/namespaces/{namespace}/pods", params={"labelSelector": f"job={job}"}
            )
            items: list[dict[str, Any]] = body["items"]
            return items if len(items) == count else None

        with anyio.fail_after(30):
            pods = await poll(lambda: workers("fits", 4), interval=0.2)
        # The Job controller made the PodGroup and put every worker in it.
        groups = {p["spec"].get("schedulingGroup", {}).get("podGroupName") for p in pods}
        assert len(groups) == 1
        (group,) = groups
        assert group
        pg = await admin.get(f"{PODGROUPS.format(ns=namespace)}/{group}")
        assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
        await watch.wait_bound([p["metadata"]["name"] for p in pods], within=30)
        await _wait_condition(admin, namespace, group, "True")
        # A second Job of five needs 10 CPU where 0 are left: none of it is bound.
        await admin.post(
            f"/apis/batch/v1/namespaces/{namespace}/jobs", _job("big", name, iso, 5, "2")
        )
        with anyio.fail_after(30):
            big = await poll(lambda: workers("big", 5), interval=0.2)
        big_group = big[0]["spec"]["schedulingGroup"]["podGroupName"]
        await _wait_condition(admin, namespace, big_group, "False")
        assert watch.bound([p["metadata"]["name"] for p in big]) == []


async def test_group_preemption_evicts_a_disruption_all_group_whole(
    asched: AschedHarness,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    """DefaultPreemption's PodGroupPostFilter with a victim group of disruptionMode All:
    the high gang needs one node, but the low group on both nodes goes whole."""
    iso = unique("iso")
    nodes = await kwok_nodes(
        [NodeSpec(f"d{i}", cpu="4", labels={ISOLATION_LABEL: iso}) for i in range(2)]
    )
    low, high = unique("gp-low"), unique("gp-high")
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    for pc, value in ((low, 10), (high, 1000)):
        body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": value}
        await admin.post(classes, {**body, "metadata": {"name": pc}})
    name = unique("native")
    try:
        lo = make_native_pod_group("lo", namespace).manifest()
        lo["spec"] |= {"priorityClassName": low, "disruptionMode": {"all": {}}}
        await admin.post(PODGROUPS.format(ns=namespace), lo)
        victims = ["lo-0", "lo-1"]
        for pod, node in zip(victims, nodes, strict=True):
            body = make_pod(pod, namespace).node(node).scheduling_group("lo").cpu("3").manifest()
            body["spec"]["priorityClassName"] = low
            await admin.post(f"/api/v1/namespaces/{namespace}/pods", body)
        async with (
            watching(admin, namespace) as watch,
            asched.run(profile_config(name)),
        ):
            hi = make_native_pod_group("hi", namespace).min_count(1).manifest()
            hi["spec"]["priorityClassName"] = high
            await admin.post(PODGROUPS.format(ns=namespace), hi)
            group = await admin.get(f"{PODGROUPS.format(ns=namespace)}/hi")
            member = (
                make_pod("hi-0", namespace)
                .scheduler(name)
                .scheduling_group("hi")
                .cpu("3")
                .node_selector({ISOLATION_LABEL: iso})
                .manifest()
            )
            member["spec"]["priorityClassName"] = high
            await admin.post(f"/api/v1/namespaces/{namespace}/pods", member)
            await watch.wait_bound(["hi-0"], within=30)
            notes = {v: [e["note"] for e in await asched.events(v, "Pod")] for v in victims}
            failed = [
                e["note"]
                for e in await asched.events("hi-0", "Pod")
                if e["reason"] == "FailedScheduling"
            ]
            left = {
                p["metadata"]["name"]
                for p in (await admin.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
                if not p["metadata"].get("deletionTimestamp")
            }
    finally:
        for pc in (low, high):
            await admin.delete(f"{classes}/{pc}")
    # Both members of the low group were evicted, though one node would have done.
    assert left == {"hi-0"}
    uid = group["metadata"]["uid"]
    want = f"Preempted by podgroup {uid} on node cluster"
    assert notes == {v: [want] for v in victims}
    # The lone member fit nowhere before preemption: it reports its own fit error (the
    # group's status with the preemption part goes to the PodGroup's condition).
    assert failed
    assert "Insufficient cpu" in failed[0], failed
