"""The scheduling profiles scenarios run under, as configuration for each scheduler.

Both schedulers get one KubeSchedulerConfiguration (v1) with one profile per entry of
PROFILES, named `<run prefix>-<profile>`, and `percentageOfNodesToScore: 100` so both
score every feasible node. A profile kube-scheduler cannot express (the seed article's
NodeAffinity labelKey/labelValue) maps to another profile for kube-scheduler through
KUBE_PROFILE; the scenario then gives kube-scheduler's pod copy the equivalent
nodeSelector (`kube_spec`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

API_VERSION = "kubescheduler.config.k8s.io/v1"

#: profile -> the profile's `plugins` and `pluginConfig` (beyond the defaults).
PROFILES: Mapping[str, Mapping[str, Any]] = {
    "default": {},
    "most-allocated": {
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {"scoringStrategy": {"type": "MostAllocated"}},
            }
        ],
    },
    "rtcr": {
        # Bin packing through the shape: the fuller the node, the higher the score.
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "resources": [
                            {"name": "cpu", "weight": 1},
                            {"name": "memory", "weight": 1},
                        ],
                        "requestedToCapacityRatio": {
                            "shape": [
                                {"utilization": 0, "score": 0},
                                {"utilization": 100, "score": 10},
                            ]
                        },
                    }
                },
            }
        ],
    },
    "dra-gpu-packing": {
        # Bin packing of DRA-backed GPUs: NodeResourcesFit scores only the extended
        # resource every DeviceClass is (no node advertises it: devices are counted).
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [
                            {"name": "deviceclass.resource.kubernetes.io/diff-gpu", "weight": 1}
                        ],
                    }
                },
            }
        ],
    },
    "balanced-only": {
        # Score with NodeResourcesBalancedAllocation alone, so it decides the node.
        "plugins": {
            "score": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 1}],
            }
        },
    },
    "no-score": {
        # No Score plugin at all: kube-scheduler stops filtering at the first feasible
        # node (findNodesThatPassFilters) and skips PreScore and Score (prioritizeNodes).
        "plugins": {"score": {"disabled": [{"name": "*"}]}},
    },
    "seed": {
        # The seed article's plugin arguments: only nodes labelled node-type=gpu.
        "pluginConfig": [
            {
                "name": "NodeAffinity",
                "args": {"labelKey": "node-type", "labelValue": "gpu"},
            }
        ],
    },
}

#: Profiles kube-scheduler cannot run, and what it runs instead.
KUBE_PROFILE: Mapping[str, str] = {"seed": "default"}


def scheduler_name(prefix: str, profile: str) -> str:
    return f"{prefix}-{profile}"


def _profiles(prefix: str, names: list[str]) -> list[dict[str, Any]]:
    return [{"schedulerName": scheduler_name(prefix, name), **PROFILES[name]} for name in names]


def asched_config(prefix: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": _profiles(prefix, list(PROFILES)),
    }


def kube_config(prefix: str, kubeconfig: Path) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
        "percentageOfNodesToScore": 100,
        "profiles": _profiles(prefix, [p for p in PROFILES if p not in KUBE_PROFILE]),
    }


def write_config(path: Path, config: Mapping[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(dict(config), sort_keys=False))
    return path
