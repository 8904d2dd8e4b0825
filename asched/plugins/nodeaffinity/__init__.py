"""NodeAffinity: nodeSelector, node affinity, addedAffinity and the seed's label pair."""

from asched.plugins.nodeaffinity.args import NodeAffinityArgs
from asched.plugins.nodeaffinity.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    SPEC,
    NodeAffinityPlugin,
    RequiredNodeAffinity,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "SPEC",
    "NodeAffinityArgs",
    "NodeAffinityPlugin",
    "RequiredNodeAffinity",
]
