"""Extenders side by side: kube-scheduler v1.37.2 and asched, one after the other, with the
same extender process and the same extenders config, on the same kwok nodes.

Compared: where each pod landed (the extender's scores make a clear winner), the
FailedScheduling message of a pod the extender rejects everywhere, who bound the pods
(the binder extender, for both), and what the extender was asked first for each pod and
verb (the nodes it was sent). This stands beside the scenario harness (harness.py),
whose one config serves every scenario: an extender there would see them all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from asched.localcluster import ClusterClient, LocalCluster, NodeSpec, find_binaries
from asched.localcluster.process import spawn
from tests.builders import make_pod
from tests.cluster_fixtures import unique
from tests.differential.cluster_objects import HIGH, LOW, ensure_cluster_objects
from tests.integration.asched_proc import free_port, running_asched
from tests.integration.conftest import NodeFactory
from tests.integration.extender_proc import ExtenderProcess, running_extender
from tests.integration.helpers import poll

RULES = {
    "reject": {"-a": "node(s) reserved by the extender"},
    "reject_pods": {"refused": "no device for this pod"},
    "scores": {"-b": 2, "-c": 9},
    "bind": True,
}
PODS = ("first", "second", "refused")


def _extenders(url: str) -> list[dict[str, Any]]:
    return [
        {
            "urlPrefix": url,
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 3,
            "bindVerb": "bind",
            "httpTimeout": "10s",
        }
    ]


def _config(
    path: Path, name: str, extenders: list[dict[str, Any]], kubeconfig: Path | None
) -> Path:
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{"schedulerName": name}],
        "extenders": extenders,
    }
    if kubeconfig is not None:
        config["clientConnection"] = {"kubeconfig": str(kubeconfig)}
        config["leaderElection"] = {"leaderElect": False}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@asynccontextmanager
async def _kube_scheduler(config: Path, log: Path) -> AsyncIterator[None]:
    args = [str(find_binaries().kube_scheduler), f"--config={config}", "--secure-port=0", "--v=2"]
    proc = await spawn("kube-scheduler", args, log)
    try:
        yield
    finally:
        await proc.stop(grace=5)


async def _outcome(
    admin: ClusterClient, ns: str, pod: str, *, bound: bool = False
) -> tuple[str, str]:
    """(node, "") once bound, ("", message) once FailedScheduling was reported (with
    *bound*, only once bound: a preemptor is reported before it can bind)."""

    async def check() -> tuple[str, str] | None:
        body = await admin.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
        if body["spec"].get("nodeName"):
            return body["spec"]["nodeName"], ""
        if bound:
            return None
        events = await admin.get(
            f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
            params={"fieldSelector": f"regarding.name={pod}"},
        )
        for e in events["items"]:
            if e.get("reason") == "FailedScheduling":
                return "", str(e["note"])
        return None

    with anyio.fail_after(60):
        return await poll(check, interval=0.2)


async def _run(
    side: str,
    cluster: LocalCluster,
    admin: ClusterClient,
    extenders: list[dict[str, Any]],
    tmp_path: Path,
    *,
    pods: tuple[str, ...] = PODS,
    existing: Sequence[dict[str, Any]] = (),
    priority_class: str = "",
) -> dict[str, tuple[str, str]]:
    """Create *existing* (bound already) and *pods* (for this side's scheduler) in a
    namespace of the side's, run its scheduler, and return each pod's outcome; the
    remaining existing pods are the outcome of key "existing" (node: their names)."""
    ns = unique(side)
    name = f"ext-{side}"
    await admin.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    for body in existing:
        await admin.post(f"/api/v1/namespaces/{ns}/pods", _in(body, ns))
    for pod in pods:
        body = make_pod(pod, ns).scheduler(name).cpu("100m").manifest()
        if priority_class:
            body["spec"]["priorityClassName"] = priority_class
        await admin.post(f"/api/v1/namespaces/{ns}/pods", body)
    try:
        if side == "kube-scheduler":
            config = _config(tmp_path / "kube.yaml", name, extenders, cluster.admin_kubeconfig)
            running = _kube_scheduler(config, tmp_path / "kube-scheduler.log")
        else:
            config = _config(tmp_path / "asched.yaml", name, extenders, None)
            running = running_asched(config, cluster.scheduler_kubeconfig, tmp_path / "a.log")
        async with running:
            out = {pod: await _outcome(admin, ns, pod, bound=bool(existing)) for pod in pods}
        if existing:
            left = (await admin.get(f"/api/v1/namespaces/{ns}/pods"))["items"]
            names = sorted(p["metadata"]["name"] for p in left if p["metadata"]["name"] not in pods)
            out["existing"] = (" ".join(names), "")
        return out
    finally:
        await admin.delete(f"/api/v1/namespaces/{ns}/pods", params={"gracePeriodSeconds": 0})
        await admin.delete(f"/api/v1/namespaces/{ns}")


def _in(body: dict[str, Any], ns: str) -> dict[str, Any]:
    """A copy of *body* in namespace *ns*."""
    return {**body, "metadata": {**body["metadata"], "namespace": ns}}


def _first_requests(ext: ExtenderProcess, side: str) -> dict[tuple[str, str], Any]:
    """The first request per (pod, verb) of one side: what the extender was sent."""
    out: dict[tuple[str, str], Any] = {}
    for r in ext.requests():
        if r["namespace"] and r["namespace"].startswith(side):
            key = (r["pod"], r["verb"])
            if key not in out:
                out[key] = sorted(r["nodes"] or r["names"] or [])
    return out


async def test_extenders_decide_alike(
    cluster: LocalCluster,
    admin: ClusterClient,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    nodes = await kwok_nodes([NodeSpec("a"), NodeSpec("b"), NodeSpec("c")])
    async with running_extender(tmp_path, RULES, cluster.scheduler_kubeconfig) as ext:
        kube = await _run("kube-scheduler", cluster, admin, _extenders(ext.url), tmp_path)
        ours = await _run("asched", cluster, admin, _extenders(ext.url), tmp_path)
        # The reference's answers, so a change on either side shows.
        assert kube["first"] == (nodes[2], "")
        assert kube["second"] == (nodes[2], "")
        assert kube["refused"][0] == ""
        assert ours == kube
        kube_asked = _first_requests(ext, "kube-scheduler")
        ours_asked = _first_requests(ext, "asched")
        assert ours_asked == kube_asked
        assert kube_asked[("first", "filter")] == sorted(nodes)
        assert kube_asked[("first", "prioritize")] == sorted(nodes[1:])
        assert ("first", "bind") in kube_asked


@pytest.mark.parametrize("failure", ["answers-500", "down"])
async def test_extender_failures_are_worded_alike(
    failure: str,
    cluster: LocalCluster,
    admin: ClusterClient,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    """A filter extender that fails: the pod's FailedScheduling message is the error, in
    net/http's words (kube-scheduler's side is the reference)."""
    await kwok_nodes([NodeSpec("a")])
    async with running_extender(tmp_path, {"status": 500}) as ext:
        url = ext.url if failure == "answers-500" else f"http://127.0.0.1:{free_port()}/ext"
        extenders = [{"urlPrefix": url, "filterVerb": "filter"}]
        kube = await _run("kube-scheduler", cluster, admin, extenders, tmp_path, pods=("p",))
        ours = await _run("asched", cluster, admin, extenders, tmp_path, pods=("p",))
    if failure == "answers-500":
        want = f"failed filter with extender at URL {url}/filter, code 500"
    else:
        port = url.removeprefix("http://127.0.0.1:").removesuffix("/ext")
        want = f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    assert kube == {"p": ("", want)}
    assert ours == kube


async def test_preempting_extender_picks_the_victims_alike(
    cluster: LocalCluster,
    admin: ClusterClient,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    """Two full nodes, one low-priority pod on each: both are candidates, and the
    extender keeps only the second; the preemptor must evict that node's pod and land
    there, in both schedulers."""
    await ensure_cluster_objects(admin)
    nodes = await kwok_nodes([NodeSpec("a", cpu="1"), NodeSpec("b", cpu="1")])
    existing = [
        make_pod(f"victim-{n[-1]}").cpu("1").node(n).label("app", "victim").manifest()
        for n in nodes
    ]
    for body in existing:
        body["spec"]["priorityClassName"] = LOW
    rules = {"preempt_keep": ["-b"]}
    async with running_extender(tmp_path, rules) as ext:
        extenders = [{"urlPrefix": ext.url, "preemptVerb": "preempt", "nodeCacheCapable": True}]
        results = {}
        for side in ("kube-scheduler", "asched"):
            results[side] = await _run(
                side,
                cluster,
                admin,
                extenders,
                tmp_path,
                pods=("preemptor",),
                existing=existing,
                priority_class=HIGH,
            )
        kube_asked = _first_requests(ext, "kube-scheduler")
        ours_asked = _first_requests(ext, "asched")
    assert results["kube-scheduler"]["preemptor"] == (nodes[1], "")
    assert results["kube-scheduler"]["existing"] == ("victim-a", "")
    assert results["asched"] == results["kube-scheduler"]
    assert kube_asked[("preemptor", "preempt")] == sorted(nodes)
    assert ours_asked == kube_asked
