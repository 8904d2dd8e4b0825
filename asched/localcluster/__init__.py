"""A real, throw-away Kubernetes control plane on loopback, for tests, demos and benchmarks.

etcd, kube-apiserver, kube-controller-manager (namespace and garbage collection only) and
kwok (fake nodes that turn Ready, fake pods that turn Running) run as child processes;
asched's PodGroup CRD and RBAC are installed; the scheduler gets its own least-privilege
identity. See docs/control-plane.md.
"""

from asched.localcluster.apply import Applier, load_manifests, wait_crd_established
from asched.localcluster.auth import ADMIN_USER, SCHEDULER_USER, Identity
from asched.localcluster.binaries import Binaries, default_bin_dir, find_binaries
from asched.localcluster.errors import (
    BinariesNotFoundError,
    ClusterError,
    ClusterStartError,
)
from asched.localcluster.local import LocalCluster
from asched.localcluster.nodes import (
    NodeSpec,
    Taint,
    build_node_manifest,
    create_nodes,
    delete_nodes,
    node_specs,
    wait_nodes_ready,
)
from asched.localcluster.rest import ApiError, ClusterClient, JsonObject

__all__ = [
    "ADMIN_USER",
    "SCHEDULER_USER",
    "ApiError",
    "Applier",
    "Binaries",
    "BinariesNotFoundError",
    "ClusterClient",
    "ClusterError",
    "ClusterStartError",
    "Identity",
    "JsonObject",
    "LocalCluster",
    "NodeSpec",
    "Taint",
    "build_node_manifest",
    "create_nodes",
    "default_bin_dir",
    "delete_nodes",
    "find_binaries",
    "load_manifests",
    "node_specs",
    "wait_crd_established",
    "wait_nodes_ready",
]
