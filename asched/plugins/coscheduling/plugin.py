"""Coscheduling: gang scheduling compatible with scheduler-plugins' PodGroup API.

A thin adapter: it maps extension points onto the GangManager (manager.py), which owns the
state machine and its guarantees (all-or-nothing, no deadlock between gangs, fail fast),
including the batched PodGroup status writer. Use it as the profile's only QueueSort plugin (disable
PrioritySort) and enable it at multiPoint; see manifests/examples/coscheduling-config.yaml.

Args mirror scheduler-plugins' CoschedulingArgs and its validation:
permitWaitingTimeSeconds (60), podGroupBackoffSeconds (0), podGroupRejectPercentage (10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

from asched.api import Pod
from asched.api.podgroup import GROUP as POD_GROUP_API_GROUP
from asched.api.podgroup import PodGroup
from asched.framework.cycle_state import CycleState
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
)
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    GangView,
    NeedsInformers,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    QueueSortPlugin,
    ReservePlugin,
)
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import GangSummary
from asched.framework.registry import ArgsError
from asched.framework.status import Status
from asched.framework.types import NodeToStatus, PostFilterResult, PreFilterResult, QueuedPodInfo
from asched.plugins.coscheduling.groups import DEFAULT_WAIT_SECONDS, PODGROUP_INFORMER
from asched.plugins.coscheduling.manager import GangManager

NAME = "Coscheduling"

# Config spelling -> dataclass field.
_FIELDS = {
    "permitWaitingTimeSeconds": "permit_waiting_time_seconds",
    "podGroupBackoffSeconds": "pod_group_backoff_seconds",
    "podGroupRejectPercentage": "pod_group_reject_percentage",
}


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        values: dict[str, int] = {}
        for k, v in raw.items():
            if k == "apiVersion":
                continue
            if k == "kind":
                if v != "CoschedulingArgs":
                    raise ArgsError(f"{path}.kind", f"expected CoschedulingArgs, got {v!r}")
                continue
            attr = _FIELDS.get(k)
            if attr is None:
                raise ArgsError(f"{path}.{k}", "unknown field")
            if isinstance(v, bool) or not isinstance(v, int):
                raise ArgsError(f"{path}.{k}", f"expected an integer, got {v!r}")
            values[attr] = v
        args = cls(**values)
        # scheduler-plugins ValidateCoschedulingArgs.
        if args.permit_waiting_time_seconds < 0:
            raise ArgsError(f"{path}.permitWaitingTimeSeconds", "must be greater than 0")
        if args.pod_group_backoff_seconds < 0:
            raise ArgsError(f"{path}.podGroupBackoffSeconds", "must be greater than 0")
        if not 0 <= args.pod_group_reject_percentage <= 100:
            raise ArgsError(f"{path}.podGroupRejectPercentage", "must be between 0 and 100")
        return args


class Coscheduling(
    QueueSortPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PostFilterPlugin,
    ReservePlugin,
    PermitPlugin,
    PostBindPlugin,
    EnqueueExtensions,
    NeedsInformers,
    GangView,
):
    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        args = args or CoschedulingArgs()
        self._handle = handle
        # A PodGroup without scheduleTimeoutSeconds waits this long at Permit.
        self._permit_wait = float(args.permit_waiting_time_seconds) or DEFAULT_WAIT_SECONDS
        self.manager = GangManager(
            handle,
            plugin=NAME,
            permit_wait_seconds=float(args.permit_waiting_time_seconds),
            backoff_seconds=float(args.pod_group_backoff_seconds),
            reject_fraction=args.pod_group_reject_percentage / 100.0,
        )

    @property
    def name(self) -> str:
        return NAME

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return [PODGROUP_INFORMER]

    def gangs(self) -> Sequence[GangSummary]:
        """GangView: every PodGroup of the informer, its state the status phase."""
        store: ObjectStore[PodGroup] = self._handle.store(PODGROUP_INFORMER)
        out = []
        for pg in store.list():
            timeout = pg.schedule_timeout_seconds
            out.append(
                GangSummary(
                    api_group=POD_GROUP_API_GROUP,
                    namespace=pg.namespace,
                    name=pg.name,
                    min_member=pg.min_member,
                    members=tuple(self._handle.pods_in_group(pg.namespace, pg.name)),
                    state=pg.status.phase or "Pending",
                    timeout_seconds=self._permit_wait if timeout is None else float(timeout),
                )
            )
        return out

    async def run(self) -> None:
        """Background work: the batched status writer and the backoff/gate timers."""
        await self.manager.run()

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        member = self.manager.hint_member_changed
        group = self.manager.hint_pod_group_changed
        return [
            # A new (or newly labelled, or ungated) member may complete minMember.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD,
                    ActionType.ADD
                    | ActionType.UPDATE_POD_LABEL
                    | ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                    "PodGroupMemberAdd",
                ),
                member,
                self.manager.member_scope,
            ),
            # Freed resources (and a gate holder's pods going away).
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD,
                    ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN,
                    "PodDelete",
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE,
                    "NodeAdd",
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD_GROUP,
                    ActionType.ADD | ActionType.UPDATE,
                    "PodGroupChange",
                ),
                group,
                self.manager.pod_group_scope,
            ),
            # A deleted PodGroup may have held the reservation gate.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD_GROUP,
                    ActionType.DELETE,
                    "PodGroupDelete",
                )
            ),
        ]

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.manager.less(a, b)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        return self.manager.pre_enqueue(pod)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, self.manager.pre_filter(state, pod, nodes)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        return None, self.manager.post_filter(state, pod, statuses)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        # Nothing to reserve; being a Reserve plugin is what makes Unreserve reach us.
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.manager.unreserve(pod)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return self.manager.permit(pod)

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.manager.post_bind(pod)


def new(args: CoschedulingArgs | None, handle: Handle) -> Coscheduling:
    return Coscheduling(args, handle)
