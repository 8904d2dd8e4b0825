"""Command lines of the control-plane components, as pure functions of a cluster layout.

Keeping the flags here, apart from process handling, lets unit tests pin them and lets
docs/control-plane.md point at one place. Every flag that is not an obvious path or port
carries a comment saying why it is set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from asched.localcluster.binaries import Binaries
from asched.localcluster.ports import LOOPBACK

ETCD = "etcd"
APISERVER = "kube-apiserver"
CONTROLLER_MANAGER = "kube-controller-manager"
KWOK = "kwok"

#: Start order; stop runs in reverse.
COMPONENTS = (ETCD, APISERVER, CONTROLLER_MANAGER, KWOK)

SERVICE_CIDR = "10.0.0.0/24"
POD_CIDR = "10.0.0.1/16"
KWOK_NODE_IP = "10.0.0.1"

#: Controllers kube-controller-manager runs: namespace deletion (otherwise a deleted
#: namespace stays Terminating for ever), ownerReference garbage collection, pod GC
#: (pods of deleted nodes, terminated pods), the PV controller (binds claims to volumes,
#: finishing what VolumeBinding's PreBind started) and StatefulSets (volumeClaimTemplates).
#: Nothing else: no node lifecycle (kwok keeps nodes Ready), no ReplicaSet controller
#: (tests create bare pods), no token controller.
CONTROLLERS = (
    "namespace-controller",
    "garbage-collector-controller",
    "pod-garbage-collector-controller",
    # Creates a Job's pods and, with WorkloadWithJob, its Workload and PodGroup.
    "job-controller",
    # Turns a pod's ResourceClaimTemplates into ResourceClaims (resource.k8s.io/v1, served
    # by default) and names them in the pod's status.resourceClaimStatuses.
    "resourceclaim-controller",
    "persistentvolume-binder-controller",
    "statefulset-controller",
)


@dataclass(frozen=True, slots=True)
class Layout:
    """Where one cluster keeps its files and which loopback ports it listens on."""

    work_dir: Path
    etcd_client_port: int
    etcd_peer_port: int
    apiserver_port: int
    controller_manager_port: int
    kwok_port: int

    @property
    def etcd_url(self) -> str:
        return f"http://{LOOPBACK}:{self.etcd_client_port}"

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self.apiserver_port}"

    @property
    def etcd_data_dir(self) -> Path:
        return self.work_dir / "etcd"

    @property
    def cert_dir(self) -> Path:
        return self.work_dir / "pki"

    @property
    def serving_cert(self) -> Path:
        """The self-signed certificate kube-apiserver writes into ``--cert-dir``."""
        return self.cert_dir / "apiserver.crt"

    @property
    def service_account_key(self) -> Path:
        return self.cert_dir / "service-account.key"

    @property
    def token_file(self) -> Path:
        return self.work_dir / "tokens.csv"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.work_dir / "admin.kubeconfig"

    @property
    def scheduler_kubeconfig(self) -> Path:
        return self.work_dir / "scheduler.kubeconfig"

    @property
    def logs_dir(self) -> Path:
        return self.work_dir / "logs"

    def log_path(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"


def etcd_args(bins: Binaries, layout: Layout) -> list[str]:
    peer = f"http://{LOOPBACK}:{layout.etcd_peer_port}"
    return [
        str(bins.etcd),
        "--name=asched",
        f"--data-dir={layout.etcd_data_dir}",
        f"--listen-client-urls={layout.etcd_url}",
        f"--advertise-client-urls={layout.etcd_url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=asched={peer}",
        # The data is thrown away with the cluster; fsync only costs latency.
        "--unsafe-no-fsync=true",
        "--log-level=warn",
        # etcd's default 2 GiB quota is far above what a test or benchmark writes; keeping
        # history compacted keeps a long benchmark from growing without bound.
        "--auto-compaction-mode=periodic",
        "--auto-compaction-retention=5m",
    ]


#: The group version of Kubernetes 1.37's Workload and PodGroup.
NATIVE_GANG_API = "scheduling.k8s.io/v1beta1"
#: kube-apiserver's gates for it (pkg/features/kube_features.go): GenericWorkload is beta
#: and off by default, TopologyAwareWorkloadScheduling and WorkloadWithJob (the Job
#: controller makes a Workload and a PodGroup for a Job with spec.scheduling) alpha.
NATIVE_GANG_GATES = ("GenericWorkload", "TopologyAwareWorkloadScheduling", "WorkloadWithJob")
#: Beta and off in 1.37: PodGroup.spec.resourceClaims (pods sharing claims through their
#: PodGroup). kube-apiserver drops the field with the gate off, so the test cluster turns
#: it on; a scheduler still needs its own gate to act on it.
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
#: Alpha and off in 1.37: CompositePodGroup (scheduling.k8s.io/v1alpha3) and PodGroups'
#: spec.parentCompositePodGroupName; needs GenericWorkload and
#: TopologyAwareWorkloadScheduling. Served only with its group version in --runtime-config.
COMPOSITE_GATE = "CompositePodGroup"
COMPOSITE_API = "scheduling.k8s.io/v1alpha3"
#: The gates the local kube-apiserver and kube-controller-manager run with.
CLUSTER_GATES = (*NATIVE_GANG_GATES, WORKLOAD_CLAIMS_GATE, COMPOSITE_GATE)


def apiserver_args(bins: Binaries, layout: Layout, *, unthrottled: bool) -> list[str]:
    args = [
        str(bins.kube_apiserver),
        f"--etcd-servers={layout.etcd_url}",
        f"--bind-address={LOOPBACK}",
        # Without it kube-apiserver looks for a non-loopback interface to advertise.
        f"--advertise-address={LOOPBACK}",
        f"--secure-port={layout.apiserver_port}",
        f"--cert-dir={layout.cert_dir}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={layout.service_account_key}",
        f"--service-account-signing-key-file={layout.service_account_key}",
        f"--token-auth-file={layout.token_file}",
        "--authorization-mode=RBAC",
        # ServiceAccount: no token controller runs, so the plugin would reject every pod
        # that names the (never created) default service account.
        # TaintNodesByCondition: it taints each new Node not-ready:NoSchedule, and only the
        # node lifecycle controller (deliberately not run; kwok owns node status) lifts it.
        "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
        # The "kubernetes" Service would get 127.0.0.1 as its endpoint, which the API
        # rejects as a loopback address; nothing in a scheduler test needs that Service.
        "--endpoint-reconciler-type=none",
        "--allow-privileged=true",
        # Kubernetes 1.37's native gang API (Workload, PodGroup and pods'
        # spec.schedulingGroup) is served only with its group version and gates on; the
        # topology-aware constraints are alpha. Both are off in a stock 1.37 cluster.
        f"--runtime-config={NATIVE_GANG_API}=true,{COMPOSITE_API}=true",
        f"--feature-gates={','.join(f'{g}=true' for g in CLUSTER_GATES)}",
        "--profiling=false",
        "--v=1",
    ]
    if unthrottled:
        # Benchmarks measure the scheduler, not kube-apiserver's flow control: no inflight
        # limits and no API Priority and Fairness queueing.
        args += [
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight=0",
            "--enable-priority-and-fairness=false",
        ]
    return args


def controller_manager_args(bins: Binaries, layout: Layout) -> list[str]:
    return [
        str(bins.kube_controller_manager),
        f"--kubeconfig={layout.admin_kubeconfig}",
        f"--controllers={','.join(CONTROLLERS)}",
        f"--feature-gates={','.join(f'{g}=true' for g in CLUSTER_GATES)}",
        # One shared admin identity; per-controller service accounts need the token controller.
        "--use-service-account-credentials=false",
        "--leader-elect=false",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={layout.controller_manager_port}",
        f"--cert-dir={layout.cert_dir / 'kcm'}",
        # /healthz answers without the delegated authn/authz lookups.
        "--authorization-always-allow-paths=/healthz,/readyz,/livez",
        "--v=1",
    ]


def kwok_args(bins: Binaries, layout: Layout) -> list[str]:
    return [
        str(bins.kwok),
        f"--kubeconfig={layout.admin_kubeconfig}",
        f"--config={bins.kwok_stages}",
        # Only nodes created as fake (nodes.py sets the annotation) are kwok's, so a real
        # node in some other test setup is never touched.
        "--manage-all-nodes=false",
        "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
        # Pod IPs come from here; /16 leaves room for thousands of Running pods.
        f"--cidr={POD_CIDR}",
        f"--node-ip={KWOK_NODE_IP}",
        f"--server-address={LOOPBACK}:{layout.kwok_port}",
        "--node-lease-duration-seconds=40",
    ]


def command_lines(
    bins: Binaries,
    layout: Layout,
    *,
    unthrottled: bool,
    extra_args: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, list[str]]:
    """argv of every component, with *extra_args[component]* appended (last flag wins)."""
    argv = {
        ETCD: etcd_args(bins, layout),
        APISERVER: apiserver_args(bins, layout, unthrottled=unthrottled),
        CONTROLLER_MANAGER: controller_manager_args(bins, layout),
        KWOK: kwok_args(bins, layout),
    }
    for component, extra in (extra_args or {}).items():
        if component not in argv:
            raise ValueError(f"extra_args for unknown component {component!r}")
        argv[component] = [*argv[component], *extra]
    return argv
