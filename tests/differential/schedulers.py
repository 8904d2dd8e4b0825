"""The two schedulers under comparison, each started as a real process for one run.

asched runs as `python -m asched run` with its own RBAC identity (tests/integration/
asched_proc.py); kube-scheduler v1.37.2 (the binary beside the other control-plane
binaries) runs with the admin kubeconfig, no leader election and no serving port, and with
the feature gates of Kubernetes 1.37's native gang scheduling (NATIVE_GANG_GATES, the
gates the local kube-apiserver serves scheduling.k8s.io/v1beta1 with): GenericWorkload
adds the GangScheduling plugin (PreEnqueue, Permit) and the pod-group scheduling cycle,
TopologyAwareWorkloadScheduling the TopologyPlacementGenerator and PodGroupPodsCount
placement plugins. For pods without spec.schedulingGroup they change nothing. Both
schedulers also run with DRAWorkloadResourceClaims (beta, off in 1.37), which changes
nothing for a pod whose claims its PodGroup does not list: such claims are still reserved
for the pod. Both schedulers are stopped when the run's `async with` ends, whatever
happened inside it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from asched.localcluster import LocalCluster, find_binaries
from asched.localcluster.components import (
    COMPOSITE_GATE,
    NATIVE_GANG_GATES,
    WORKLOAD_CLAIMS_GATE,
)
from asched.localcluster.process import ManagedProcess, spawn
from tests.differential.profiles import (
    KUBE_PROFILE,
    asched_config,
    kube_config,
    scheduler_name,
    write_config,
)
from tests.integration.asched_proc import AschedProcess, running_asched


class SchedulerDied(RuntimeError):
    """The scheduler process exited during its run."""


class Running(Protocol):
    def check_alive(self) -> None:
        """Raise SchedulerDied (with the log's tail) if the process has exited."""


@dataclass(frozen=True, slots=True)
class Side:
    """One scheduler: its display name and the prefix of its scheduler names/namespaces."""

    name: str
    prefix: str

    def scheduler_name(self, profile: str) -> str:
        if self.name == KUBE:
            profile = KUBE_PROFILE.get(profile, profile)
        return scheduler_name(self.prefix, profile)


ASCHED = "asched"
KUBE = "kube-scheduler"

#: kube-scheduler's --feature-gates: the native gang API's, as kube-apiserver has them,
#: PodGroup claims and CompositePodGroups.
KUBE_FEATURE_GATES = ",".join(
    f"{gate}=true" for gate in (*NATIVE_GANG_GATES, WORKLOAD_CLAIMS_GATE, COMPOSITE_GATE)
)
#: asched's --feature-gates (the native gang API needs none in asched).
ASCHED_FEATURE_GATES = [
    "--feature-gates",
    f"{WORKLOAD_CLAIMS_GATE}=true,{COMPOSITE_GATE}=true",
]


#: The environment switch for asched's log level in these runs (default info). At debug
#: the queue logs each PreEnqueue gate and hint-driven move (pod_gated, pods_moved), which
#: shows why a pod was left pending.
LOG_LEVEL_ENV = "ASCHED_DIFF_LOG_LEVEL"


class _AschedRunning:
    def __init__(self, proc: AschedProcess) -> None:
        self._proc = proc

    def check_alive(self) -> None:
        p = self._proc.proc
        if p is not None and p.poll() is not None:
            raise SchedulerDied(f"asched exited with {p.returncode}:\n{self._proc.logs()[-3000:]}")


class _KubeRunning:
    def __init__(self, proc: ManagedProcess) -> None:
        self._proc = proc

    def check_alive(self) -> None:
        if not self._proc.running():
            tail = self._proc.log_path.read_text(errors="replace")[-3000:]
            raise SchedulerDied(f"kube-scheduler exited with {self._proc.returncode}:\n{tail}")


@asynccontextmanager
async def run_scheduler(
    side: Side, cluster: LocalCluster, work_dir: Path
) -> AsyncIterator[Running]:
    """Start *side*'s scheduler with every profile; stop it on exit."""
    log_path = work_dir / f"{side.prefix}.log"
    if side.name == ASCHED:
        config = write_config(work_dir / "asched.yaml", asched_config(side.prefix))
        level = os.environ.get(LOG_LEVEL_ENV)
        # Given after running_asched's own --log-level, so it wins.
        extra = [*ASCHED_FEATURE_GATES, *(["--log-level", level] if level else [])]
        async with running_asched(config, cluster.scheduler_kubeconfig, log_path, extra) as proc:
            yield _AschedRunning(proc)
        return
    config = write_config(
        work_dir / "kube-scheduler.yaml", kube_config(side.prefix, cluster.admin_kubeconfig)
    )
    binary = find_binaries().kube_scheduler
    args = [
        str(binary),
        f"--config={config}",
        "--secure-port=0",
        f"--feature-gates={KUBE_FEATURE_GATES}",
        "--v=2",
    ]
    kube = await spawn(KUBE, args, log_path)
    try:
        yield _KubeRunning(kube)
    finally:
        await kube.stop(grace=5)
