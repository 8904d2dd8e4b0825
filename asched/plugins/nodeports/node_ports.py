"""NodePorts: the host ports a pod asks for must be free on the node.

Mirrors kube-scheduler plugins/nodeports: PreFilter collects the pod's host ports (Skip
when it has none); Filter rejects, Unschedulable, "node(s) didn't have free ports for the
requested pod ports" when one conflicts with a port in use. Conflicts follow
HostPortInfo.CheckConflict: same protocol and port, and either address is 0.0.0.0 (the
wildcard binds every address) or both are the same address. Requeued when a pod holding
a conflicting port is deleted, or a node is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from asched.api import Pod
from asched.api.pod import HostPort
from asched.framework.columns import (
    BatchVerdict,
    Int64s,
    NodeColumns,
    Unbatchable,
)
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.signatures import HOST_PORTS, SignFragment, SignResult, host_ports
from asched.framework.status import Code, Status, error, skip
from asched.framework.types import PreFilterResult
from asched.plugins.helpers import as_pod

NAME = "NodePorts"

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
WILDCARD_IP = "0.0.0.0"

_REJECT = Status(Code.UNSCHEDULABLE, (ERR_REASON,), NAME)
_SKIP = skip(NAME)

# Per wanted port: the port, and the wildcard-address port that also conflicts with it
# (None when the wanted port is itself the wildcard), precomputed so Filter allocates nothing.
_Wanted = tuple[tuple[HostPort, HostPort | None], ...]
_PRE_FILTER_KEY: StateKey[_Wanted] = StateKey("PreFilter" + NAME)


def wanted_ports(pod: Pod) -> _Wanted:
    return tuple(
        (hp, None if hp.ip == WILDCARD_IP else HostPort(WILDCARD_IP, hp.protocol, hp.port))
        for hp in pod.host_ports
    )


def fits_ports(wanted: _Wanted, used: Mapping[HostPort, int]) -> bool:
    if not used:
        return True
    for port, wildcard in wanted:
        if wildcard is None:
            # Binding every address clashes with the same protocol/port on any address.
            for hp in used:
                if hp.port == port.port and hp.protocol == port.protocol:
                    return False
        elif port in used or wildcard in used:
            return False
    return True


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    def __init__(self, args: None, handle: Handle) -> None:
        del args, handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> SignResult:
        """NodePorts.SignPod."""
        return (SignFragment(HOST_PORTS, host_ports(pod)),)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        wanted = wanted_ports(pod)
        if not wanted:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, wanted)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = state.get(_PRE_FILTER_KEY)
        if wanted is None:
            return error(f'reading "PreFilter{NAME}" from cycleState: not found', NAME)
        return None if fits_ports(wanted, node_info.used_ports) else _REJECT

    def filter_batch(
        self, state: CycleState, pod: Pod, cols: NodeColumns, rows: Int64s
    ) -> BatchVerdict | None:
        """Only nodes where some pod holds a host port can conflict; those run filter()."""
        wanted = state.get(_PRE_FILTER_KEY)
        if wanted is None:
            raise Unbatchable  # the per-node path reports the Error
        busy = np.flatnonzero(cols.has_ports[rows])
        if not busy.size:
            return None
        passed = np.ones(len(rows), dtype=np.bool_)
        infos = cols.infos
        for k in busy.tolist():
            passed[k] = fits_ports(wanted, infos[int(rows[k])].used_ports)
        return BatchVerdict.constant(passed, _REJECT)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            # Host ports are immutable, so only deletions free them.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), self._after_pod_deleted
            ),
            # Always worth a retry (kube-scheduler registers it without a hint).
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        )

    def _after_pod_deleted(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        deleted = as_pod(old)
        if deleted is None:
            return QueueingHint.QUEUE
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        if not deleted.host_ports:
            return QueueingHint.QUEUE_SKIP
        used = dict.fromkeys(deleted.host_ports, 1)
        # If the pod fits next to the deleted pod's ports alone, they never clashed.
        if fits_ports(wanted_ports(pod), used):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


SPEC = PluginSpec(NAME, NodePorts, None)
