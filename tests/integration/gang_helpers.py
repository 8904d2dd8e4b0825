"""Helpers for the gang-scheduling end-to-end tests: config, gangs, and a binding recorder.

`BindingWatch` is the witness the gang tests rely on: a WATCH on the namespace's pods,
opened before the scheduler starts, that stamps each pod with the moment its binding was
first seen (one clock for every pod, so spreads between members are comparable). It
never misses a binding: it lists first, watches from the list's resourceVersion, and
resumes from the last version it saw when the server ends the stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import yaml

from asched.api.podgroup import POD_GROUP_LABEL
from asched.localcluster import ClusterClient
from tests.builders import make_pod, make_pod_group
from tests.integration.harness import AschedHarness

EXAMPLE_CONFIG = Path(__file__).parents[2] / "manifests" / "examples" / "coscheduling-config.yaml"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
# Nodes of one test carry this label and its pods select it, so nodes that other tests
# left behind (or create concurrently) cannot take part.
ISOLATION_LABEL = "asched-test/gang"


def gang_config(
    scheduler_name: str,
    *,
    permit_wait_seconds: int | None = None,
    backoff_seconds: int | None = None,
    qps: int = 0,
) -> str:
    """manifests/examples/coscheduling-config.yaml, with a test-unique schedulerName (YAML).

    The example is used as shipped (Coscheduling replaces PrioritySort at queueSort and
    is enabled at multiPoint); only the scheduler name, the timing args a test needs to
    be short, and the client's qps/burst (0 keeps kube-scheduler's 50/100) change.
    """
    cfg: dict[str, Any] = yaml.safe_load(EXAMPLE_CONFIG.read_text())
    (profile,) = cfg["profiles"]
    profile["schedulerName"] = scheduler_name
    (plugin_config,) = profile["pluginConfig"]
    args = plugin_config["args"]
    if permit_wait_seconds is not None:
        args["permitWaitingTimeSeconds"] = permit_wait_seconds
    if backoff_seconds is not None:
        args["podGroupBackoffSeconds"] = backoff_seconds
    if qps:
        cfg["clientConnection"] = {"qps": qps, "burst": 2 * qps}
    return yaml.safe_dump(cfg, sort_keys=False)


@dataclass(frozen=True, slots=True)
class Gang:
    name: str
    min_member: int
    members: tuple[str, ...]
    # anyio.current_time() just before the first member was created.
    created_at: float = 0.0


async def create_gang(
    admin: ClusterClient,
    ns: str,
    name: str,
    size: int,
    *,
    scheduler: str,
    isolation: str,
    cpu: str = "1",
    min_member: int | None = None,
    cpu_of: dict[int, str] | None = None,
    timeout_seconds: int | None = None,
) -> Gang:
    """A PodGroup and its `size` member pods (`<name>-<i>`); `cpu_of` overrides per member."""
    group = make_pod_group(name, ns).min_member(min_member or size)
    if timeout_seconds is not None:
        group.timeout(timeout_seconds)
    await admin.post(PODGROUPS.format(ns=ns), group.manifest())
    members = tuple(f"{name}-{i}" for i in range(size))
    limiter = anyio.Semaphore(16)

    async def create(i: int, pod: str) -> None:
        manifest = (
            make_pod(pod, ns)
            .scheduler(scheduler)
            .pod_group(name)
            .cpu((cpu_of or {}).get(i, cpu))
            .node_selector({ISOLATION_LABEL: isolation})
            .manifest()
        )
        async with limiter:
            await admin.post(f"/api/v1/namespaces/{ns}/pods", manifest)

    created_at = anyio.current_time()
    async with anyio.create_task_group() as tg:
        for i, pod in enumerate(members):
            tg.start_soon(create, i, pod)
    return Gang(name, min_member or size, members, created_at)


async def delete_pods(admin: ClusterClient, ns: str, names: Iterable[str]) -> None:
    """Force-delete pods (grace 0): kwok nodes have no kubelet to confirm termination."""
    limiter = anyio.Semaphore(16)

    async def delete(name: str) -> None:
        async with limiter:
            await admin.delete(
                f"/api/v1/namespaces/{ns}/pods/{name}", params={"gracePeriodSeconds": 0}
            )

    async with anyio.create_task_group() as tg:
        for name in names:
            tg.start_soon(delete, name)


@dataclass(slots=True)
class BindingWatch:
    """Pods of one namespace as a WATCH sees them: when each was first bound, and to where."""

    client: ClusterClient
    namespace: str
    bound_at: dict[str, float] = field(default_factory=dict)
    node_of: dict[str, str] = field(default_factory=dict)
    group_of: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def _see(self, kind: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        name = meta["name"]
        group = (meta.get("labels") or {}).get(POD_GROUP_LABEL)
        if group:
            self.group_of[name] = group
        node = (pod.get("spec") or {}).get("nodeName")
        if node and name not in self.bound_at:
            self.bound_at[name] = anyio.current_time()
            self.node_of[name] = node
        if kind == "DELETED":
            self.deleted.add(name)
        self.changed.set()
        self.changed = anyio.Event()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        items, version = await self.client.list_with_version(path)
        for pod in items:
            self._see("ADDED", pod)
        task_status.started()
        while True:
            async with self.client.watch(
                path, resource_version=version, params={"allowWatchBookmarks": True}
            ) as stream:
                async for event in stream:
                    obj = event["object"]
                    version = obj["metadata"].get("resourceVersion", version)
                    if event["type"] != "BOOKMARK":
                        self._see(event["type"], obj)

    def bound(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if n in self.bound_at]

    def spread(self, names: Iterable[str]) -> float:
        """Seconds between the first and the last binding among `names` (all bound)."""
        times = [self.bound_at[n] for n in names]
        return max(times) - min(times)

    async def wait_bound(self, names: Iterable[str], within: float) -> None:
        want = list(names)
        with anyio.fail_after(within):
            while len(self.bound(want)) < len(want):
                await self.changed.wait()

    async def wait_quiet(self, quiet: float, within: float) -> None:
        """Until no pod was bound for `quiet` seconds."""
        with anyio.fail_after(within):
            while True:
                last = max(self.bound_at.values(), default=0.0)
                left = last + quiet - anyio.current_time()
                if left <= 0:
                    return
                await anyio.sleep(left)


def partial_groups(watch: BindingWatch, gangs: Iterable[Gang]) -> dict[str, int]:
    """Groups with some but fewer than minMember members bound: name -> bound count."""
    out: dict[str, int] = {}
    for g in gangs:
        n = len(watch.bound(g.members))
        if 0 < n < g.min_member:
            out[g.name] = n
    return out


async def kill_between_bindings_then_restart(
    asched: AschedHarness,
    watch: BindingWatch,
    gangs: Sequence[Gang],
    *,
    throttled: str,
    config: str,
) -> dict[str, int]:
    """SIGKILL asched (started with the *throttled* config) as soon as it bound a pod, then
    start it again with *config* until every member of *gangs* is bound. Returns how many
    members of each gang were bound when the first process died.

    Throttled, so the bindings leave one or a few at a time and the kill lands between
    two: unthrottled, every binding can be on the wire before the first one is seen."""
    bound_before = len(watch.bound_at)
    members = [m for g in gangs for m in g.members]
    async with asched.run(throttled) as proc:
        with anyio.fail_after(30):
            while len(watch.bound_at) == bound_before:
                await watch.changed.wait()
        proc.kill()
    # Bindings already on the wire when the process died may still land.
    await anyio.sleep(1)
    at_kill = {g.name: len(watch.bound(g.members)) for g in gangs}
    print(
        f"\nbound per gang when asched was killed: {at_kill}; "
        f"partial: {partial_groups(watch, gangs)}"
    )
    assert sum(at_kill.values()) < len(members), "asched finished before it could be killed"
    async with asched.run(config):
        await watch.wait_bound(members, within=60)
        await anyio.sleep(1)
    return at_kill
