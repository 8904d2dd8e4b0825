"""Helpers for the operational tests: kubectl, a binding recorder, leases, logs, metrics.

They exist so test_operations.py reads as the behaviour it checks. Nothing here blocks
the event loop: kubectl runs as an async subprocess, and the TCP forwarder and the pod
watch are tasks of the calling test's task group.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import orjson
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from asched.client.protocol import TRANSPORT_ERRORS, ApiError
from asched.localcluster import ClusterClient
from asched.localcluster.binaries import BUILD_SCRIPT, find_binaries
from tests.builders import make_pod
from tests.integration.asched_proc import AschedProcess
from tests.integration.harness import profile_config

ROOT = Path(__file__).parents[2]
MANIFESTS = ROOT / "manifests"


# ---- kubectl ----------------------------------------------------------------------------


def kubectl_path() -> Path:
    """kubectl from the control-plane cache (hack/controlplane/build.sh builds it)."""
    path = find_binaries().dir / "kubectl"
    if not path.is_file():
        pytest.fail(f"kubectl is missing from {path.parent}; build it with {BUILD_SCRIPT}")
    return path


async def kubectl(*args: str, kubeconfig: Path | None = None) -> str:
    """Run kubectl; its stdout, or a test failure with its stderr."""
    argv = [str(kubectl_path()), *args]
    if kubeconfig is not None:
        argv += ["--kubeconfig", str(kubeconfig)]
    result = await anyio.run_process(argv, check=False)
    if result.returncode != 0:
        pytest.fail(
            f"kubectl {' '.join(args)} exited {result.returncode}:\n"
            f"{result.stderr.decode(errors='replace')}"
        )
    return result.stdout.decode()


# ---- configs, pods, leases, logs --------------------------------------------------------

# Short leases so a failover test takes seconds (kube-scheduler's defaults are 15/10/2 s).
LEASE_DURATION = 4.0
RETRY_PERIOD = 1.0


def leader_config(scheduler_name: str) -> str:
    """One profile, leader election on with the short leases above (YAML)."""
    return profile_config(
        scheduler_name,
        leader_election={
            "leaderElect": True,
            "leaseDuration": f"{LEASE_DURATION:g}s",
            "renewDeadline": "3s",
            "retryPeriod": f"{RETRY_PERIOD:g}s",
        },
    )


def leader_elect_flags(namespace: str) -> list[str]:
    return ["--leader-elect", "--lease-namespace", namespace, "--lease-name", "asched"]


def lease_path(namespace: str, name: str = "asched") -> str:
    return f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"


async def lease_spec(admin: ClusterClient, namespace: str) -> dict[str, Any]:
    lease = await admin.get(lease_path(namespace))
    spec: dict[str, Any] = lease.get("spec") or {}
    return spec


def log_events(proc: AschedProcess, event: str) -> list[dict[str, Any]]:
    """The process's JSON log records named `event`."""
    records = []
    for line in proc.logs().splitlines():
        if not line.startswith("{"):
            continue
        record = orjson.loads(line)
        if record.get("event") == event:
            records.append(record)
    return records


def identity_of(proc: AschedProcess) -> str:
    """The Lease identity the process campaigns with (from leader_election_started)."""
    [started] = log_events(proc, "leader_election_started")
    identity: str = started["identity"]
    return identity


def pod_manifest(name: str, namespace: str, scheduler: str) -> dict[str, Any]:
    return make_pod(name, namespace).scheduler(scheduler).cpu("10m").memory("16Mi").manifest()


async def create_pods(
    admin: ClusterClient,
    namespace: str,
    scheduler: str,
    names: list[str],
    *,
    per_second: float,
    concurrency: int = 16,
) -> None:
    """Create the pods at a steady rate, so a test can act while scheduling is under way."""
    limiter = anyio.Semaphore(concurrency)
    start = anyio.current_time()

    async def create(i: int, name: str) -> None:
        async with limiter:
            await admin.post(
                f"/api/v1/namespaces/{namespace}/pods", pod_manifest(name, namespace, scheduler)
            )

    async with anyio.create_task_group() as tg:
        for i, name in enumerate(names):
            await anyio.sleep_until(start + i / per_second)
            tg.start_soon(create, i, name)


# ---- a watch that records every binding -------------------------------------------------


@dataclass(slots=True)
class BindingRecorder:
    """Every nodeName each pod of a namespace ever had, as one WATCH saw it.

    Started before any scheduler, it sees each binding as it happens: a pod bound twice,
    or moved, would show two node names.
    """

    client: ClusterClient
    namespace: str
    nodes: dict[str, list[str]] = field(default_factory=dict)
    bound_at: dict[str, float] = field(default_factory=dict)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def _see(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        seen = self.nodes.setdefault(name, [])
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if node and (not seen or seen[-1] != node):
            seen.append(node)
            self.bound_at.setdefault(name, anyio.current_time())
            self.changed.set()
            self.changed = anyio.Event()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        items, version = await self.client.list_with_version(path)
        for pod in items:
            self._see(pod)
        task_status.started()
        while True:  # the server ends a watch after a while; resume where it stopped
            try:
                async with self.client.watch(
                    path, resource_version=version, params={"allowWatchBookmarks": True}
                ) as stream:
                    async for event in stream:
                        obj = event["object"]
                        version = obj["metadata"].get("resourceVersion", version)
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self._see(obj)
            except TRANSPORT_ERRORS:
                # The API server restarting under a fault test: resume once it is back.
                await anyio.sleep(0.2)
            except ApiError as err:
                if not err.gone:
                    raise
                # A restarted server's watch cache starts at its own version: relist. A
                # pod's nodeName never changes once set, so the list misses no binding.
                items, version = await self.client.list_with_version(path)
                for pod in items:
                    self._see(pod)

    @property
    def bound(self) -> int:
        return len(self.bound_at)

    def rebound(self) -> dict[str, list[str]]:
        """Pods whose nodeName was set more than once or changed."""
        return {name: seen for name, seen in self.nodes.items() if len(seen) > 1}

    async def wait_bound(self, count: int, within: float) -> None:
        with anyio.fail_after(within):
            while self.bound < count:
                await self.changed.wait()


# ---- metrics ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def parse_metrics(text: str) -> list[Sample]:
    return [
        Sample(s.name, dict(s.labels), s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def value(samples: Iterable[Sample], name: str, **labels: str) -> float:
    """Sum of the samples of `name` whose labels include `labels` (NaN when none)."""
    matched = [s.value for s in samples if s.name == name and labels.items() <= s.labels.items()]
    return sum(matched) if matched else math.nan


def label_values(samples: Iterable[Sample], name: str, label: str) -> set[str]:
    return {s.labels[label] for s in samples if s.name == name and label in s.labels}


def buckets_monotonic(samples: Iterable[Sample], name: str) -> bool:
    """Each series' cumulative bucket counts never decrease as `le` grows."""
    series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    for s in samples:
        if s.name == f"{name}_bucket":
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, []).append((float(s.labels["le"]), s.value))
    return bool(series) and all(
        all(a[1] <= b[1] for a, b in zip(sorted(pts), sorted(pts)[1:], strict=False))
        for pts in series.values()
    )


# ---- an API server that comes up later --------------------------------------------------


def kubeconfig_via(original: Path, target: Path, port: int) -> Path:
    """A copy of `original` that reaches the API server through 127.0.0.1:`port`.

    The server's certificate names 127.0.0.1, so TLS still verifies through a forwarder.
    """
    config = yaml.safe_load(original.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = f"https://127.0.0.1:{port}"
    target.write_text(yaml.safe_dump(config))
    return target


async def _pipe(src: anyio.abc.ByteStream, dst: anyio.abc.ByteStream) -> None:
    try:
        async for chunk in src:
            await dst.send(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        await dst.aclose()


async def forward_tcp(
    port: int,
    upstream_host: str,
    upstream_port: int,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on 127.0.0.1:`port` and relay every connection to the upstream, until cancelled."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)

    async def relay(client: anyio.abc.SocketStream) -> None:
        async with client:
            try:
                up = await anyio.connect_tcp(upstream_host, upstream_port)
            except OSError:
                return  # the client sees a closed connection and retries
            async with up, anyio.create_task_group() as tg:
                tg.start_soon(_pipe, client, up)
                tg.start_soon(_pipe, up, client)

    async with listener:
        task_status.started()
        await listener.serve(relay)
