from __future__ import annotations

from pathlib import Path

import pytest

from asched.localcluster.binaries import Binaries
from asched.localcluster.components import (
    APISERVER,
    CONTROLLER_MANAGER,
    ETCD,
    KWOK,
    Layout,
    command_lines,
)

BINS = Binaries(Path("/bin-dir"))
LAYOUT = Layout(Path("/cluster-dir"), 2379, 2380, 6443, 10257, 10247)
THROTTLE_FLAGS = {
    "--max-requests-inflight=0",
    "--max-mutating-requests-inflight=0",
    "--enable-priority-and-fairness=false",
}


def flags(argv: list[str]) -> dict[str, str]:
    return dict(a.split("=", 1) for a in argv[1:] if "=" in a)


def test_each_component_runs_its_binary() -> None:
    argv = command_lines(BINS, LAYOUT, unthrottled=True)
    assert {name: args[0] for name, args in argv.items()} == {
        ETCD: "/bin-dir/etcd",
        APISERVER: "/bin-dir/kube-apiserver",
        CONTROLLER_MANAGER: "/bin-dir/kube-controller-manager",
        KWOK: "/bin-dir/kwok",
    }


def test_apiserver_flags() -> None:
    f = flags(command_lines(BINS, LAYOUT, unthrottled=True)[APISERVER])
    assert f["--etcd-servers"] == "http://127.0.0.1:2379"
    assert f["--secure-port"] == "6443"
    assert f["--bind-address"] == "127.0.0.1"
    assert f["--authorization-mode"] == "RBAC"
    assert set(f["--disable-admission-plugins"].split(",")) == {
        "ServiceAccount",
        "TaintNodesByCondition",
    }
    assert f["--token-auth-file"] == "/cluster-dir/tokens.csv"


@pytest.mark.parametrize("unthrottled", [True, False])
def test_throttling_flags(unthrottled: bool) -> None:
    argv = set(command_lines(BINS, LAYOUT, unthrottled=unthrottled)[APISERVER])
    assert (argv >= THROTTLE_FLAGS) is unthrottled
    assert not (THROTTLE_FLAGS & argv) or unthrottled


def test_etcd_is_unsafe_fast_on_loopback() -> None:
    f = flags(command_lines(BINS, LAYOUT, unthrottled=True)[ETCD])
    assert f["--unsafe-no-fsync"] == "true"
    assert f["--listen-client-urls"] == "http://127.0.0.1:2379"
    assert f["--data-dir"] == "/cluster-dir/etcd"


def test_controller_manager_runs_only_gc_job_resourceclaim_volume_and_sts_controllers() -> None:
    f = flags(command_lines(BINS, LAYOUT, unthrottled=True)[CONTROLLER_MANAGER])
    assert f["--controllers"].split(",") == [
        "namespace-controller",
        "garbage-collector-controller",
        "pod-garbage-collector-controller",
        "job-controller",
        # Claims from ResourceClaimTemplates (DRA).
        "resourceclaim-controller",
        "persistentvolume-binder-controller",
        "statefulset-controller",
    ]
    # The Job controller makes Workloads and PodGroups for gang Jobs (WorkloadWithJob);
    # the resourceclaim controller makes a PodGroup's claims from its templates
    # (DRAWorkloadResourceClaims); CompositePodGroup is on so that PodGroups may name a
    # parent (the API server serves scheduling.k8s.io/v1alpha3 for the composites).
    assert f["--feature-gates"] == (
        "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,WorkloadWithJob=true,"
        "DRAWorkloadResourceClaims=true,CompositePodGroup=true"
    )
    assert f["--use-service-account-credentials"] == "false"
    assert f["--leader-elect"] == "false"
    assert f["--kubeconfig"] == "/cluster-dir/admin.kubeconfig"


def test_kwok_manages_only_annotated_nodes() -> None:
    f = flags(command_lines(BINS, LAYOUT, unthrottled=True)[KWOK])
    assert f["--manage-all-nodes"] == "false"
    assert f["--manage-nodes-with-annotation-selector"] == "kwok.x-k8s.io/node=fake"
    assert f["--config"] == "/bin-dir/kwok-stages.yaml"
    assert f["--server-address"] == "127.0.0.1:10247"


def test_extra_args_are_appended() -> None:
    argv = command_lines(BINS, LAYOUT, unthrottled=True, extra_args={KWOK: ["--v=4"]})
    assert argv[KWOK][-1] == "--v=4"
    assert "--v=4" not in argv[APISERVER]


def test_extra_args_for_unknown_component() -> None:
    with pytest.raises(ValueError, match="unknown component"):
        command_lines(BINS, LAYOUT, unthrottled=True, extra_args={"kubelet": ["--x"]})
