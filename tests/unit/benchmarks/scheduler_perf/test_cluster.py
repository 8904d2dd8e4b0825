"""The control plane a workload runs on: its gates, and the clients util.go gives it."""

from __future__ import annotations

from asched.localcluster.components import APISERVER, CONTROLLER_MANAGER
from benchmarks.scheduler_perf.run import cluster_args


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
