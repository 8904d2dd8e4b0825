"""How a workload's run is set up: the control plane's gates and clients, the profiler."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from asched.localcluster.components import APISERVER, CONTROLLER_MANAGER
from benchmarks.scheduler_perf.config import decode_test_cases
from benchmarks.scheduler_perf.params import resolve
from benchmarks.scheduler_perf.run import PerfOptions, cluster_args, restarts_scheduler
from benchmarks.schedulers import ClientLimits, Kind


def test_the_controllers_get_scheduler_perfs_client_limits() -> None:
    # kube-controller-manager's default (qps 20 per controller) bounded the DRA
    # steady-state workloads, whose claims its resourceclaim controller makes.
    args = cluster_args({"DynamicResourceAllocation": True})
    assert "--kube-api-qps=5000" in args[CONTROLLER_MANAGER]
    assert "--kube-api-burst=5000" in args[CONTROLLER_MANAGER]
    assert not any(a.startswith("--kube-api-qps") for a in args[APISERVER])


def test_the_workloads_gates_reach_apiserver_and_controllers() -> None:
    args = cluster_args({"DynamicResourceAllocation": True, "SchedulerAsyncAPICalls": False})
    for component in (APISERVER, CONTROLLER_MANAGER):
        gates = next(a for a in args[component] if a.startswith("--feature-gates="))
        assert "DynamicResourceAllocation=true" in gates
        assert "SchedulerAsyncAPICalls=false" in gates
    runtime = next(a for a in args[APISERVER] if a.startswith("--runtime-config="))
    assert "resource.k8s.io/v1beta2=true" in runtime


STEADY = """
- name: Steady
  defaultPodTemplatePath: ../templates/pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    steadyStateParam: $steady
    durationParam: $duration
    collectMetrics: true
  workloads:
  - name: w
    params: {nodes: 2, pods: 10, steady: true, duration: 10s}
"""


@pytest.mark.parametrize(
    ("steady", "backlog", "restarts"),
    [(True, True, False), (False, True, True), (False, False, False)],
    ids=["steady-backlog", "backlog", "as-upstream"],
)
def test_py_spy_attaches_at_start_unless_a_backlog_restart_comes(
    tmp_path: Path, *, steady: bool, backlog: bool, restarts: bool
) -> None:
    # A steady-state op is never created as a backlog, so no restart would attach py-spy.
    (case,) = decode_test_cases(yaml.safe_load(STEADY), tmp_path / "performance-config.yaml")
    workload = case.workloads[0]
    ops = tuple(resolve(case, workload, {"steady": steady}))
    opts = PerfOptions(
        case=case,
        workload=workload,
        ops=ops,
        overrides={},
        runs=1,
        schedulers=(Kind.ASCHED,),
        limits=ClientLimits(5000, 5000),
        out_dir=tmp_path,
        backlog=backlog,
    )
    assert restarts_scheduler(opts) is restarts
