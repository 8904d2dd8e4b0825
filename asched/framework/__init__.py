"""The scheduling framework: contracts (extension-point Protocols, Status, CycleState,
events, NodeInfo, Handle, registry) and the runtime that runs a profile's plugins.

The framework imports no plugin; plugins import the framework, never the scheduler.
"""

from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import EventRecorder, Handle
from asched.framework.interfaces import (
    AsyncFilterPlugin,
    AsyncScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreNormalizer,
    ScorePlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import ArgsError, PluginSpec, Registry
from asched.framework.signatures import SignFragment, SignPlugin, unsignable
from asched.framework.status import Code, Status
from asched.framework.types import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "ActionType",
    "ArgsError",
    "AsyncFilterPlugin",
    "AsyncScorePlugin",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FilterPlugin",
    "Handle",
    "NodeInfo",
    "NodeScore",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PluginSpec",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "Registry",
    "ReservePlugin",
    "ScoreNormalizer",
    "ScorePlugin",
    "SignFragment",
    "SignPlugin",
    "StateKey",
    "Status",
    "unsignable",
]
