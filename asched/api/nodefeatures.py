"""Node declared features: which features a pod needs its node to declare.

Mirrors component-helpers v0.37.2 nodedeclaredfeatures: the registry
(features.AllFeatures, sorted by name as nodedeclaredfeatures.New sorts it) and each
feature's InferForScheduling. A node declares features in `status.declaredFeatures`;
names the registry does not know are ignored (FeatureMapper.TryMap). No feature of the
1.37 registry has a MaxVersion, so the scheduler's version never drops one.

Of the nine features, three can be inferred from a pod to schedule:
- RestartAllContainersOnContainerExits: a container or init container has a
  `restartPolicyRules` entry with action RestartAllContainers;
- UserNamespacesHostNetworkSupport: `hostNetwork: true` with `hostUsers: false`;
- VolumeBindMountOptions: a volume mount of a container, init container or ephemeral
  container has `bindMountOptions`.
The others (DRA, resize and websocket features) infer nothing for scheduling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"

#: Every feature of features.AllFeatures, sorted by name.
REGISTRY: tuple[str, ...] = tuple(
    sorted(
        (
            RESTART_ALL_CONTAINERS,
            "InPlacePodLevelResourcesVerticalScaling",
            "ExtendWebSocketsToKubelet",
            "InPlacePodVerticalScalingInitContainers",
            "InPlacePodVerticalScalingMemoryBackedVolumes",
            USER_NAMESPACES_HOST_NETWORK,
            "DRANodeAllocatableResources",
            VOLUME_BIND_MOUNT_OPTIONS,
            "DRAOptionalNodeOperations",
        )
    )
)


def _restart_all_containers(spec: Mapping[str, Any]) -> bool:
    """restartallcontainers.Feature.InferForScheduling."""
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            for rule in c.get("restartPolicyRules") or ():
                if rule.get("action") == "RestartAllContainers":
                    return True
    return False


def _user_namespaces_host_network(spec: Mapping[str, Any]) -> bool:
    """usernamespaceshostnetwork.Feature.InferForScheduling."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


def _volume_bind_mount_options(spec: Mapping[str, Any]) -> bool:
    """volumebindmountoptions.Feature.InferForScheduling."""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or ():
            for mount in c.get("volumeMounts") or ():
                if mount.get("bindMountOptions"):
                    return True
    return False


def infer_for_scheduling(spec: Mapping[str, Any]) -> frozenset[str]:
    """Framework.InferForPodScheduling: the features the pod needs of its node."""
    out: list[str] = []
    if _restart_all_containers(spec):
        out.append(RESTART_ALL_CONTAINERS)
    if _user_namespaces_host_network(spec):
        out.append(USER_NAMESPACES_HOST_NETWORK)
    if _volume_bind_mount_options(spec):
        out.append(VOLUME_BIND_MOUNT_OPTIONS)
    # One shared empty set: almost no pod needs a feature, and each frozenset() is a new
    # 216-byte object the garbage collector tracks, one per decoded pod version.
    return frozenset(out) if out else _NONE


_NONE: frozenset[str] = frozenset()


def known_features(declared: tuple[str, ...]) -> frozenset[str]:
    """FeatureMapper.TryMap: the declared names the registry knows."""
    return frozenset(name for name in declared if name in REGISTRY)
