"""The schedulers under test: their configuration files and their processes.

Both schedulers get the same KubeSchedulerConfiguration apart from their identity: the same
client qps/burst, the same percentageOfNodesToScore, leader election off, one profile with
a schedulerName that only the benchmark's pods use. asched runs as its own RBAC identity
(manifests/rbac.yaml); kube-scheduler runs with the admin kubeconfig, since the control
plane has no kube-scheduler identity - RBAC costs the API server the same either way.

A SchedulerProcess starts the binary in its own session (so stopping it kills nothing
else), serves /metrics on a free loopback port, and stops with SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import copy
import enum
import os
import signal
import socket
import ssl
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import anyio.abc
import structlog
import yaml

from asched.localcluster import find_binaries
from asched.localcluster.components import NATIVE_GANG_GATES

log = structlog.get_logger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[1]
COSCHEDULING_EXAMPLE = REPO_ROOT / "manifests" / "examples" / "coscheduling-config.yaml"


class Kind(enum.StrEnum):
    ASCHED = "asched"
    KUBE = "kube-scheduler"
    #: asched with the default profile plus the seed's policies (examples/policies).
    ASCHED_PLUGINS = "asched-plugins"

    @property
    def is_asched(self) -> bool:
        return self is not Kind.KUBE


#: The schedulerName each scheduler serves; pods of a run carry the one of their scheduler.
SCHEDULER_NAMES: Mapping[Kind, str] = {
    Kind.ASCHED: "asched-bench",
    Kind.KUBE: "kube-scheduler-bench",
    Kind.ASCHED_PLUGINS: "asched-plugins-bench",
}

#: The regions the `plugins` scenario's nodes are in (benchmarks/scenarios.py), which
#: RegionFence's defaultRegions list whole: the fence is evaluated, and rejects nothing.
REGION_LABEL = "topology.kubernetes.io/region"
REGIONS = ("region-a", "region-b")


def policies_profile() -> dict[str, Any]:
    """The default profile plus all six policies of examples/policies (asched-policies,
    installed beside asched by hack/env.sh), configured so that no node is rejected:
    RegionFence fences pods into the regions every node is in, GPUDriver and GPUResource
    skip pods without GPUs, Location prefers one region (the pods' annotation)."""
    return {
        "plugins": {
            "multiPoint": {
                "enabled": [
                    {"name": "RegionFence"},
                    {"name": "GPUDriver"},
                    {"name": "StrongestCPU", "weight": 1},
                    {"name": "CPUUtilization"},
                    {"name": "GPUResource"},
                    {"name": "Location"},
                ]
            }
        },
        "pluginConfig": [{"name": "RegionFence", "args": {"defaultRegions": list(REGIONS)}}],
    }


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """clientConnection qps/burst, set identically on both schedulers."""

    qps: float
    burst: int

    @property
    def label(self) -> str:
        return f"qps{self.qps:g}-burst{self.burst}"


@dataclass(frozen=True, slots=True)
class SchedulerSetup:
    """What one run configures: the limits, the sampling policy and the plugin profile."""

    limits: ClientLimits
    percentage_of_nodes_to_score: int = 0  # 0: the adaptive default, in both schedulers
    gang: bool = False
    #: Native gangs: kube-scheduler gets Kubernetes 1.37's gates (asched always has them).
    native_gang: bool = False
    permit_waiting_seconds: int = 60
    podgroup_backoff_seconds: int = 10
    #: Run asched from this directory (an exported commit) instead of the checkout.
    asched_src: Path | None = None
    #: PodTopologySpread's defaultingType for both: "List" (with no constraints) makes
    #: plain pods signable, so opportunistic batching acts in both schedulers.
    spread_defaulting: str = "System"
    #: The profile's schedulerName instead of SCHEDULER_NAMES[kind]: "default-scheduler"
    #: serves unmodified pods (scheduler_perf's templates name no scheduler).
    scheduler_name: str | None = None
    #: Feature gates a workload sets (scheduler_perf featureGates), given to both
    #: schedulers as they are: asched refuses a value it cannot honour, naming the gate
    #: and why (asched.base.featuregates), as kube-scheduler refuses a locked gate's.
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


def _gate_list(gates: Mapping[str, bool]) -> str:
    """`--feature-gates`' value: Name=true|false, comma separated (both schedulers' syntax)."""
    return ",".join(f"{g}={str(v).lower()}" for g, v in gates.items())


def coscheduling_profile(setup: SchedulerSetup) -> dict[str, Any]:
    """The profile of manifests/examples/coscheduling-config.yaml, with the run's timings."""
    document = yaml.safe_load(COSCHEDULING_EXAMPLE.read_text())
    profile: dict[str, Any] = copy.deepcopy(document["profiles"][0])
    for entry in profile.get("pluginConfig", []):
        if entry["name"] == "Coscheduling":
            entry["args"]["permitWaitingTimeSeconds"] = setup.permit_waiting_seconds
            entry["args"]["podGroupBackoffSeconds"] = setup.podgroup_backoff_seconds
    return profile


def render_config(kind: Kind, setup: SchedulerSetup, kubeconfig: Path | None) -> dict[str, Any]:
    """The KubeSchedulerConfiguration (as a dict) for *kind*."""
    if setup.gang and kind is not Kind.ASCHED:
        raise ValueError("only asched has a Coscheduling plugin")
    profile: dict[str, Any] = coscheduling_profile(setup) if setup.gang else {}
    if kind is Kind.ASCHED_PLUGINS:
        profile = policies_profile()
    profile["schedulerName"] = setup.scheduler_name or SCHEDULER_NAMES[kind]
    if setup.spread_defaulting != "System":
        profile.setdefault("pluginConfig", []).append(
            {"name": "PodTopologySpread", "args": {"defaultingType": setup.spread_defaulting}}
        )
    client: dict[str, Any] = {"qps": setup.limits.qps, "burst": setup.limits.burst}
    if kubeconfig is not None:
        client["kubeconfig"] = str(kubeconfig)
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": client,
        "leaderElection": {"leaderElect": False},
        "percentageOfNodesToScore": setup.percentage_of_nodes_to_score,
        "profiles": [profile],
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class SchedulerProcess:
    """One scheduler as a child process. start(), wait_ready(), metrics(), stop()."""

    def __init__(
        self,
        kind: Kind,
        setup: SchedulerSetup,
        *,
        work_dir: Path,
        admin_kubeconfig: Path,
        scheduler_kubeconfig: Path,
        extra_args: Sequence[str] = (),
        launcher: Sequence[str] = (),
    ) -> None:
        self.kind = kind
        # Appended to the command line (the soak asks asched for JSON logs).
        self._extra_args = list(extra_args)
        # What runs asched's `run` command instead of `python -m asched` (benchmarks.memtrace
        # wraps it in a process that can report its own memory).
        self._launcher = list(launcher) or [sys.executable, "-m", "asched"]
        self.port = free_port()
        self.work_dir = work_dir
        self.log_path = work_dir / f"{kind}.log"
        self.config_path = work_dir / f"{kind}.yaml"
        self._admin_kubeconfig = admin_kubeconfig
        self._scheduler_kubeconfig = scheduler_kubeconfig
        self._setup = setup
        self._process: anyio.abc.Process | None = None
        self.started_at = 0.0

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("scheduler not started")
        return self._process.pid

    @property
    def url(self) -> str:
        scheme = "http" if self.kind.is_asched else "https"
        return f"{scheme}://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        if self.kind.is_asched:
            return [
                *self._launcher,
                "run",
                "--config",
                str(self.config_path),
                "--kubeconfig",
                str(self._scheduler_kubeconfig),
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                str(self.port),
                # Plain HTTP on loopback: the harness scrapes /metrics without a token.
                "--insecure-serving",
                "--no-leader-elect",
                "--log-level",
                "warning",
                *self._asched_gates(),
                *self._extra_args,
            ]
        return [
            str(find_binaries().kube_scheduler),
            f"--config={self.config_path}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.port}",
            f"--cert-dir={self.work_dir / 'kube-scheduler-certs'}",
            # No delegated authn/authz identity exists for it; serve these paths to anyone.
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--v=1",
            *self._kube_gates(),
            *self._extra_args,
        ]

    def _kube_gates(self) -> list[str]:
        gates = dict.fromkeys(NATIVE_GANG_GATES, True) if self._setup.native_gang else {}
        gates.update(self._setup.feature_gates)
        if not gates:
            return []
        return [f"--feature-gates={_gate_list(gates)}"]

    def _asched_gates(self) -> list[str]:
        gates = self._setup.feature_gates
        if not gates:
            return []
        return ["--feature-gates", _gate_list(gates)]

    async def start(self) -> None:
        kubeconfig = self._admin_kubeconfig if self.kind is Kind.KUBE else None
        config = render_config(self.kind, self._setup, kubeconfig)
        await anyio.Path(self.config_path).write_text(yaml.safe_dump(config, sort_keys=False))
        env = os.environ.copy()
        cwd = None
        if self.kind.is_asched and self._setup.asched_src is not None:
            # `python -m` puts the working directory first on sys.path.
            cwd = self._setup.asched_src
            env["PYTHONPATH"] = str(cwd)
        log_file = self.log_path.open("ab")
        try:
            self.started_at = time.time()
            self._process = await anyio.open_process(
                self.argv(),
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
                env=env,
                cwd=cwd,
            )
        finally:
            log_file.close()
        log.info("scheduler_started", scheduler=str(self.kind), pid=self.pid, port=self.port)

    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def wait_ready(self) -> float:
        """Poll /readyz until 200 (bound it with fail_after); return the wall time."""
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        connector = aiohttp.TCPConnector(ssl=insecure if self.kind is Kind.KUBE else False)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=5)
        ) as http:
            while True:
                if not self.running():
                    raise RuntimeError(f"{self.kind} exited: {self.log_tail()}")
                try:
                    async with http.get(f"{self.url}/readyz") as resp:
                        if resp.status == 200:
                            return time.time()
                except (aiohttp.ClientError, OSError, TimeoutError):
                    pass
                await anyio.sleep(0.05)

    async def metrics(self) -> str:
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        connector = aiohttp.TCPConnector(ssl=insecure if self.kind is Kind.KUBE else False)
        async with (
            aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=30)
            ) as http,
            http.get(f"{self.url}/metrics") as resp,
        ):
            return await resp.text()

    def log_tail(self, chars: int = 3000) -> str:
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-chars:]

    async def stop(self, grace: float = 20.0) -> int | None:
        """SIGTERM, wait up to *grace* seconds, then SIGKILL the process group."""
        process, self._process = self._process, None
        if process is None:
            return None
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(grace):
                await process.wait()
            if process.returncode is None:
                log.warning("scheduler_killed", scheduler=str(self.kind), pid=process.pid)
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        await process.aclose()
        return process.returncode
