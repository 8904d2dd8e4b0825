"""asched as an operator runs it: its manifests, its RBAC, failover, metrics, probes, shutdown.

Every test talks to the session's real kube-apiserver; schedulers run as `asched run`
processes with the identity system:asched, which has only manifests/rbac.yaml's rules.
The Deployment's own pods never run (kwok nodes run no containers, and no ReplicaSet
controller runs): the manifests test checks that the API server accepts and stores them.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import aiohttp
import anyio
import pytest
import yaml

from asched.config import load_config
from asched.localcluster import ApiError, ClusterClient, LocalCluster, NodeSpec
from asched.localcluster.apply import Applier, load_manifests
from asched.localcluster.kubeconfig import write_kubeconfig
from asched.plugins.registry import in_tree_registry
from tests.integration.asched_proc import AschedProcess, free_port
from tests.integration.conftest import NodeFactory
from tests.integration.harness import AschedHarness
from tests.integration.helpers import bind, poll, status_of
from tests.integration.ops_helpers import (
    LEASE_DURATION,
    MANIFESTS,
    RETRY_PERIOD,
    BindingRecorder,
    buckets_monotonic,
    create_pods,
    forward_tcp,
    identity_of,
    kubeconfig_via,
    kubectl,
    label_values,
    leader_config,
    leader_elect_flags,
    lease_path,
    lease_spec,
    log_events,
    parse_metrics,
    pod_manifest,
    value,
)

# ---- a. the manifests -------------------------------------------------------------------


async def _object_path(applier: Applier, obj: dict[str, Any]) -> str:
    return f"{await applier.collection_path(obj)}/{obj['metadata']['name']}"


async def test_kustomize_base_applies_server_side(
    cluster: LocalCluster,
    admin: ClusterClient,
    tmp_path: Path,
) -> None:
    rendered = load_manifests(await kubectl("kustomize", str(MANIFESTS)))
    kinds = sorted(o["kind"] for o in rendered)
    assert kinds == sorted(
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleBinding",
            "ConfigMap",
            "ConfigMap",
            "CustomResourceDefinition",
            "Deployment",
            "Namespace",
            "PodDisruptionBudget",
            "Service",
            "ServiceAccount",
        ]
    )
    # A dry run validates every object on the server (schemas, defaulting, admission).
    await kubectl(
        "apply",
        "-k",
        str(MANIFESTS),
        "--server-side",
        "--dry-run=server",
        kubeconfig=cluster.admin_kubeconfig,
    )

    # The namespace, RBAC and CRD already exist (the harness applied them); applying over
    # them must not conflict. What this test creates, it deletes.
    applier = Applier(admin)
    paths = [await _object_path(applier, o) for o in rendered]
    existed = {p for p in paths if await admin.exists(p)}
    try:
        await kubectl(
            "apply",
            "-k",
            str(MANIFESTS),
            "--server-side",
            "--field-manager=asched-ops-test",
            kubeconfig=cluster.admin_kubeconfig,
        )
        by_kind = {o["kind"]: p for o, p in zip(rendered, paths, strict=True)}
        deployment = await admin.get(by_kind["Deployment"])
        spec = deployment["spec"]
        assert spec["replicas"] == 2
        [container] = spec["template"]["spec"]["containers"]
        assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        [volume] = [v for v in spec["template"]["spec"]["volumes"] if v["name"] == "config"]
        stored = await admin.get(
            f"/api/v1/namespaces/asched/configmaps/{volume['configMap']['name']}"
        )
        # The config as the pod would read it from its volume.
        config_file = tmp_path / "config.yaml"
        config_file.write_text(stored["data"]["config.yaml"])
        config = load_config(config_file, in_tree_registry())
        assert config.warnings == ()
        assert [p.scheduler_name for p in config.profiles] == ["asched", "custom-scheduler"]
        dashboard = await admin.get("/api/v1/namespaces/asched/configmaps/asched-grafana-dashboard")
        assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    finally:
        for path in reversed(paths):
            if path not in existed:
                await admin.delete(path)


async def test_deployment_pod_passes_restricted_pod_security(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
) -> None:
    """The pod template meets the `restricted` Pod Security Standard."""
    rendered = load_manifests(await kubectl("kustomize", str(MANIFESTS)))
    [deployment] = [o for o in rendered if o["kind"] == "Deployment"]
    await admin.patch(
        f"/api/v1/namespaces/{namespace}",
        {
            "metadata": {
                "labels": {
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": "latest",
                }
            }
        },
    )
    template = deployment["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "asched-pss", "labels": template["metadata"]["labels"]},
        "spec": template["spec"],
    }
    pods = f"/api/v1/namespaces/{namespace}/pods"
    await admin.post(pods, pod, params={"dryRun": "All"})
    # The same pod without its security settings is refused: the check has teeth.
    bare = yaml.safe_load(yaml.safe_dump(pod))
    bare["spec"].pop("securityContext")
    bare["spec"]["containers"][0].pop("securityContext")
    with pytest.raises(ApiError) as refused:
        await admin.post(pods, bare, params={"dryRun": "All"})
    assert refused.value.status == 403


# ---- b. RBAC ----------------------------------------------------------------------------

SA_USER = "system:serviceaccount:asched:asched"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:asched", "system:authenticated"]


class Access(NamedTuple):
    """One request a SubjectAccessReview asks about (namespaced ones in "default")."""

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    name: str = ""
    namespaced: bool = True


_ACCESS = [
    # What asched does.
    pytest.param(Access("create", "pods", subresource="binding"), True, id="bind-pods"),
    pytest.param(Access("patch", "pods", subresource="status"), True, id="patch-pod-status"),
    pytest.param(Access("watch", "pods", namespaced=False), True, id="watch-pods"),
    pytest.param(Access("delete", "pods"), True, id="delete-pods-preemption"),
    pytest.param(Access("watch", "nodes", namespaced=False), True, id="watch-nodes"),
    pytest.param(Access("create", "events", "events.k8s.io"), True, id="create-events"),
    pytest.param(Access("patch", "events"), True, id="patch-core-events"),
    pytest.param(Access("create", "leases", "coordination.k8s.io"), True, id="create-lease"),
    pytest.param(
        Access("update", "leases", "coordination.k8s.io", name="asched"), True, id="renew-own-lease"
    ),
    pytest.param(
        Access("patch", "podgroups", "scheduling.x-k8s.io", "status"),
        True,
        id="patch-podgroup-status",
    ),
    pytest.param(
        Access("list", "poddisruptionbudgets", "policy", namespaced=False), True, id="list-pdbs"
    ),
    # DynamicResources: read DRA objects, write a claim's allocation and reservation.
    pytest.param(
        Access("watch", "resourceslices", "resource.k8s.io", namespaced=False),
        True,
        id="watch-resourceslices",
    ),
    pytest.param(
        Access("patch", "resourceclaims", "resource.k8s.io", "binding"),
        True,
        id="patch-resourceclaim-binding",
    ),
    pytest.param(
        Access("patch", "resourceclaims", "resource.k8s.io", "status"),
        True,
        id="patch-resourceclaim-status",
    ),
    # The claim of a pod's extended resources backed by DRA (DRAExtendedResource).
    pytest.param(
        Access("create", "resourceclaims", "resource.k8s.io"),
        True,
        id="create-resourceclaims",
    ),
    pytest.param(
        Access("create", "resourceslices", "resource.k8s.io", namespaced=False),
        False,
        id="forbidden-create-resourceslices",
    ),
    pytest.param(
        Access("delete", "resourceslices", "resource.k8s.io", namespaced=False),
        False,
        id="forbidden-delete-resourceslices",
    ),
    # The ops port's delegated authn/authz (system:auth-delegator).
    pytest.param(
        Access("create", "tokenreviews", "authentication.k8s.io", namespaced=False),
        True,
        id="review-tokens",
    ),
    pytest.param(
        Access("create", "subjectaccessreviews", "authorization.k8s.io", namespaced=False),
        True,
        id="review-access",
    ),
    # What it must not be able to do.
    pytest.param(
        Access("update", "leases", "coordination.k8s.io", name="kube-scheduler"),
        False,
        id="forbidden-renew-kube-schedulers-lease",
    ),
    pytest.param(Access("create", "nodes", namespaced=False), False, id="forbidden-create-nodes"),
    pytest.param(Access("update", "nodes", namespaced=False), False, id="forbidden-update-nodes"),
    pytest.param(
        Access("delete", "namespaces", namespaced=False), False, id="forbidden-delete-namespaces"
    ),
    pytest.param(Access("get", "secrets"), False, id="forbidden-get-secrets"),
    pytest.param(Access("list", "secrets", namespaced=False), False, id="forbidden-list-secrets"),
    pytest.param(Access("create", "pods"), False, id="forbidden-create-pods"),
    pytest.param(Access("update", "pods"), False, id="forbidden-update-pod-spec"),
    pytest.param(
        Access("create", "pods", subresource="eviction"), False, id="forbidden-evict-pods"
    ),
    pytest.param(
        Access("create", "serviceaccounts", subresource="token"), False, id="forbidden-mint-tokens"
    ),
    pytest.param(
        Access("create", "clusterrolebindings", "rbac.authorization.k8s.io", namespaced=False),
        False,
        id="forbidden-bind-roles",
    ),
    pytest.param(
        Access(
            "escalate", "clusterroles", "rbac.authorization.k8s.io", name="asched", namespaced=False
        ),
        False,
        id="forbidden-escalate-own-role",
    ),
    pytest.param(Access("get", "configmaps"), False, id="forbidden-read-configmaps"),
]


@pytest.mark.parametrize(
    ("user", "groups"),
    [
        pytest.param("system:asched", ["system:authenticated"], id="token-user"),
        pytest.param(SA_USER, SA_GROUPS, id="in-cluster-service-account"),
    ],
)
@pytest.mark.parametrize(("access", "allowed"), _ACCESS)
async def test_identity_can_do_exactly_what_asched_needs(
    admin: ClusterClient,
    user: str,
    groups: list[str],
    access: Access,
    allowed: bool,
) -> None:
    attributes = {
        "verb": access.verb,
        "group": access.group,
        "resource": access.resource,
        "subresource": access.subresource,
        "name": access.name,
    }
    if access.namespaced:
        attributes["namespace"] = "default"
    review = await admin.post(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups, "resourceAttributes": attributes},
        },
    )
    assert review["status"].get("allowed", False) is allowed, review["status"]


async def test_scheduler_identity_performs_its_job_and_nothing_dangerous(
    admin: ClusterClient,
    scheduler_client: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
) -> None:
    """The same rules, exercised with real requests as system:asched."""
    [node] = await kwok_nodes([NodeSpec("rbac")])
    pods = f"/api/v1/namespaces/{namespace}/pods"
    await admin.post(pods, pod_manifest("p", namespace, "nobody"))
    await scheduler_client.patch(
        f"{pods}/p/status",
        {
            "status": {
                "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
                ]
            }
        },
    )
    await bind(scheduler_client, namespace, "p", node)
    await scheduler_client.post(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "p.asched-ops"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "asched",
            "reportingInstance": "asched-ops-test",
            "action": "Binding",
            "reason": "Scheduled",
            "type": "Normal",
            "note": "test",
            "regarding": {"kind": "Pod", "name": "p", "namespace": namespace},
        },
    )
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "asched"},
        "spec": {"holderIdentity": "ops-test"},
    }
    created = await scheduler_client.post(
        f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", lease
    )
    created["spec"]["holderIdentity"] = "ops-test-2"
    await scheduler_client.put(lease_path(namespace), created)

    forbidden = {
        "create-node": scheduler_client.post(
            "/api/v1/nodes",
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"{node}-evil"}},
        ),
        "delete-namespace": scheduler_client.delete(f"/api/v1/namespaces/{namespace}"),
        "list-secrets": scheduler_client.get(f"/api/v1/namespaces/{namespace}/secrets"),
        "get-secret": scheduler_client.get(f"/api/v1/namespaces/{namespace}/secrets/anything"),
        "create-pod": scheduler_client.post(pods, pod_manifest("q", namespace, "nobody")),
        "other-lease": scheduler_client.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/kube-scheduler"
        ),
    }
    statuses = {what: await status_of(request) for what, request in forbidden.items()}
    assert statuses == dict.fromkeys(forbidden, 403)


async def test_asched_schedules_as_the_deployments_service_account(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> None:
    """What the Deployment's pods would do: run with a token of ServiceAccount asched/asched."""
    [node] = await kwok_nodes([NodeSpec("sa")])
    request = await admin.post(
        "/api/v1/namespaces/asched/serviceaccounts/asched/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    kubeconfig = await write_kubeconfig(
        asched.tmp_path / "sa.kubeconfig",
        asched.cluster.server,
        SA_USER,
        request["status"]["token"],
        ca_pem=asched.cluster.ca_pem,
    )
    scheduler = f"sa-{namespace}"
    config = leader_config(scheduler)
    recorder = BindingRecorder(admin, namespace)
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)
        async with asched.run(
            config, kubeconfig=kubeconfig, args=leader_elect_flags(namespace)
        ) as proc:
            await asched.create_pod(pod_manifest("p", namespace, scheduler))
            await recorder.wait_bound(1, within=30)
            assert await proc.terminate() == 0
        tg.cancel_scope.cancel()
    assert recorder.nodes == {"p": [node]}
    assert not log_events(proc, "lease_update_failed")


# ---- c. leader failover -----------------------------------------------------------------


async def test_leader_failover_binds_every_pod_exactly_once(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> None:
    await kwok_nodes([NodeSpec(f"f{i:02d}", cpu="32", memory="64Gi") for i in range(20)])
    scheduler = f"failover-{namespace}"
    config = leader_config(scheduler)
    flags = leader_elect_flags(namespace)
    total = 400
    names = [f"p{i:03d}" for i in range(total)]
    recorder = BindingRecorder(admin, namespace)
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)  # watching before any scheduler exists
        async with asched.run(config, args=flags) as a:
            with anyio.fail_after(20):
                await poll(lambda: _holder_is(admin, namespace, identity_of(a)))
            async with asched.run(config, args=flags) as b:
                assert not log_events(b, "leader_elected")  # b stands by
                tg.start_soon(
                    functools.partial(
                        create_pods, admin, namespace, scheduler, names, per_second=200.0
                    )
                )
                await recorder.wait_bound(total // 4, within=60)
                a.kill()
                killed = anyio.current_time()
                bound_at_kill = recorder.bound
                with anyio.fail_after(30):
                    await poll(lambda: _holder_is(admin, namespace, identity_of(b)), interval=0.02)
                takeover = anyio.current_time() - killed
                await recorder.wait_bound(total, within=120)
        tg.cancel_scope.cancel()

    by_a, by_b = _bound_by(a), _bound_by(b)
    first_by_b = min(recorder.bound_at[name] for name in by_b) - killed
    conflicts = len(log_events(b, "bind_conflict"))
    print(
        f"\nfailover: leader killed with {bound_at_kill}/{total} pods bound; standby took "
        f"the Lease after {takeover:.2f}s and made its first binding after {first_by_b:.2f}s "
        f"(leaseDuration {LEASE_DURATION:g}s); {len(by_b)} bound by the standby, "
        f"{conflicts} of its bindings refused as already bound"
    )
    assert bound_at_kill < total, "the leader finished before it was killed"
    assert recorder.rebound() == {}
    assert sorted(recorder.nodes) == names
    assert all(len(seen) == 1 for seen in recorder.nodes.values())
    # Each scheduler's own account agrees: no pod was bound by both.
    assert by_b
    assert not by_a & by_b
    # client-go semantics: the standby counts the lease duration from when it last saw the
    # Lease change, and tries again every retryPeriod plus up to 1.2x jitter.
    assert takeover <= LEASE_DURATION + 2 * RETRY_PERIOD * 2.2
    spec = await lease_spec(admin, namespace)
    assert spec["leaseTransitions"] >= 1
    assert log_events(b, "leader_elected")


def _bound_by(proc: AschedProcess) -> set[str]:
    """Pods the process reports it bound (pod_bound log records, `namespace/name`)."""
    return {r["pod"].partition("/")[2] for r in log_events(proc, "pod_bound")}


async def _holder_is(admin: ClusterClient, namespace: str, identity: str) -> bool | None:
    try:
        spec = await lease_spec(admin, namespace)
    except ApiError as err:
        if err.status == 404:
            return None
        raise
    return True if spec.get("holderIdentity") == identity else None


# ---- d. metrics -------------------------------------------------------------------------


async def test_metrics_after_a_run(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> None:
    await kwok_nodes([NodeSpec(f"m{i}", cpu="8") for i in range(5)])
    profile = f"metrics-{namespace}"
    config = leader_config(profile)
    count = 60
    pods = f"/api/v1/namespaces/{namespace}/pods"
    async with asched.run(config, args=leader_elect_flags(namespace)) as proc:
        for i in range(count):
            await admin.post(pods, pod_manifest(f"p{i:02d}", namespace, profile))
        huge = pod_manifest("huge", namespace, profile)
        huge["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100"
        await admin.post(pods, huge)

        async def settled() -> list[Any] | None:
            # scheduler_pending_pods is refreshed every second; wait for the final picture.
            samples = parse_metrics(await proc.metrics())
            pending = {
                q: value(samples, "scheduler_pending_pods", queue=q)
                for q in ("active", "backoff", "unschedulable", "gated")
            }
            scheduled = value(
                samples, "scheduler_schedule_attempts_total", result="scheduled", profile=profile
            )
            done = scheduled == count and pending == {
                "active": 0,
                "backoff": 0,
                "unschedulable": 1,
                "gated": 0,
            }
            return samples if done else None

        with anyio.fail_after(60):
            samples = await poll(settled, interval=0.5)

    bound = [p for p in (await admin.get(pods))["items"] if p["spec"].get("nodeName")]
    assert len(bound) == count
    assert value(
        samples, "scheduler_schedule_attempts_total", result="scheduled", profile=profile
    ) == len(bound)
    assert (
        value(samples, "scheduler_schedule_attempts_total", result="unschedulable", profile=profile)
        >= 1
    )
    assert (
        value(
            samples,
            "scheduler_scheduling_attempt_duration_seconds_count",
            result="scheduled",
            profile=profile,
        )
        == count
    )
    # Every bound pod is one observation of its attempt count (each needed exactly one).
    assert value(samples, "scheduler_pod_scheduling_attempts_count") == count
    assert value(samples, "scheduler_pod_scheduling_attempts_sum") == count
    points = label_values(
        samples, "scheduler_framework_extension_point_duration_seconds_count", "extension_point"
    )
    # kube-scheduler times these points as a whole (Filter only per plugin). It also times
    # Score and PostBind, which asched's runtime does not record yet.
    assert {"PreFilter", "PreScore", "Reserve", "Permit", "PreBind", "Bind"} <= points, points
    assert (
        value(
            samples,
            "scheduler_framework_extension_point_duration_seconds_count",
            extension_point="PreFilter",
            profile=profile,
        )
        >= count + 1
    )
    assert (
        value(
            samples,
            "scheduler_framework_extension_point_duration_seconds_count",
            extension_point="Bind",
            status="Success",
            profile=profile,
        )
        == count
    )
    lag_count = value(samples, "asched_event_loop_lag_seconds_count")
    assert lag_count > 0
    assert value(samples, "asched_event_loop_lag_seconds_sum") / lag_count < 0.5
    assert value(samples, "scheduler_goroutines", operation="binding") == 0
    for histogram in (
        "scheduler_framework_extension_point_duration_seconds",
        "scheduler_scheduling_attempt_duration_seconds",
        "asched_event_loop_lag_seconds",
    ):
        assert buckets_monotonic(samples, histogram), histogram


# ---- e. probes and shutdown -------------------------------------------------------------


async def _status(http: aiohttp.ClientSession, url: str) -> int | None:
    try:
        async with http.get(url) as resp:
            return resp.status
    except aiohttp.ClientError:
        return None


async def test_readyz_waits_for_the_caches_while_livez_answers(
    cluster: LocalCluster,
    tmp_path: Path,
) -> None:
    """Until the API server is reachable asched is alive but not ready; then it is ready."""
    port = free_port()
    kubeconfig = kubeconfig_via(cluster.scheduler_kubeconfig, tmp_path / "late.kubeconfig", port)
    api = urlsplit(cluster.server)
    # Not AschedHarness.run: that waits for /readyz, which is what this test watches.
    config = tmp_path / "config.yaml"
    config.write_text(leader_config("readyz-test"))
    proc = AschedProcess(config, kubeconfig, tmp_path / "asched.log")
    proc.start()
    try:
        async with aiohttp.ClientSession() as http, anyio.create_task_group() as tg:
            with anyio.fail_after(30):
                await poll(lambda: _ok(http, f"{proc.url}/livez"), interval=0.05)
            # The API server is unreachable: informers retry, readiness says why.
            for _ in range(10):
                assert await _status(http, f"{proc.url}/livez") == 200
                assert await _status(http, f"{proc.url}/readyz") == 500
                await anyio.sleep(0.2)
            async with http.get(f"{proc.url}/readyz") as resp:
                assert "not synced" in await resp.text()
            await tg.start(forward_tcp, port, api.hostname or "127.0.0.1", api.port or 443)
            with anyio.fail_after(60):
                await poll(lambda: _ok(http, f"{proc.url}/readyz"), interval=0.1)
            tg.cancel_scope.cancel()
        assert await proc.terminate(within=15) == 0
    finally:
        proc.kill()


async def _ok(http: aiohttp.ClientSession, url: str) -> bool | None:
    return True if await _status(http, url) == 200 else None


async def test_sigterm_stops_cleanly_and_leaves_no_pod_half_done(
    asched: AschedHarness, admin: ClusterClient, namespace: str, kwok_nodes: NodeFactory
) -> None:
    await kwok_nodes([NodeSpec(f"s{i:02d}", cpu="32", memory="64Gi") for i in range(10)])
    scheduler = f"sigterm-{namespace}"
    config = leader_config(scheduler)
    flags = leader_elect_flags(namespace)
    total = 300
    names = [f"p{i:03d}" for i in range(total)]
    recorder = BindingRecorder(admin, namespace)
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)
        async with asched.run(config, args=flags) as first:
            creating = anyio.Event()

            async def create_all() -> None:
                await create_pods(admin, namespace, scheduler, names, per_second=200.0)
                creating.set()

            tg.start_soon(create_all)
            await recorder.wait_bound(total // 4, within=60)
            began = time.monotonic()
            code = await first.terminate(within=20)
            stopped_in = time.monotonic() - began
            bound_at_stop = recorder.bound
        assert code == 0
        assert log_events(first, "shutdown_requested")
        assert log_events(first, "asched_stopped")
        # The Lease is handed back, so a successor need not wait for it to expire.
        assert (await lease_spec(admin, namespace)).get("holderIdentity", "") == ""
        await creating.wait()

        # Nothing half-done: each pod is either bound (with PodScheduled=True from the API
        # server) or untouched by a binding; none carries a stale nomination.
        for pod in (await admin.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]:
            conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions", [])}
            assert not pod["status"].get("nominatedNodeName"), pod["metadata"]["name"]
            if pod["spec"].get("nodeName"):
                assert conditions.get("PodScheduled") == "True", pod["metadata"]["name"]
            else:
                assert conditions.get("PodScheduled") != "True", pod["metadata"]["name"]

        # A successor takes the released Lease at once and binds the rest, each once.
        started = anyio.current_time()
        async with asched.run(config, args=flags) as second:
            with anyio.fail_after(LEASE_DURATION):
                await poll(lambda: _holder_is(admin, namespace, identity_of(second)))
            acquired_in = anyio.current_time() - started
            await recorder.wait_bound(total, within=120)
        tg.cancel_scope.cancel()

    print(
        f"\nsigterm: stopped in {stopped_in:.2f}s with {bound_at_stop}/{total} bound; "
        f"successor (incl. start-up) held the Lease after {acquired_in:.2f}s"
    )
    assert stopped_in < 15
    assert bound_at_stop < total, "asched finished before it was stopped"
    assert recorder.rebound() == {}
    assert sorted(recorder.nodes) == names


async def test_sigterm_on_a_standby_exits_at_once_and_leaves_the_leader(
    asched: AschedHarness, admin: ClusterClient, namespace: str
) -> None:
    config = leader_config(f"standby-{namespace}")
    flags = leader_elect_flags(namespace)
    async with asched.run(config, args=flags) as leader:
        with anyio.fail_after(20):
            await poll(lambda: _holder_is(admin, namespace, identity_of(leader)))
        async with asched.run(config, args=flags) as standby:
            began = time.monotonic()
            assert await standby.terminate(within=10) == 0
            stopped_in = time.monotonic() - began
        assert stopped_in < 5
        assert not log_events(standby, "leader_elected")
        assert await _holder_is(admin, namespace, identity_of(leader))
