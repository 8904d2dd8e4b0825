"""VolumeBinding, as far as asched goes: refuse pods that need PersistentVolumeClaims.

kube-scheduler's VolumeBinding binds and provisions PVCs with node topology in mind.
asched does not implement volume topology yet, so rather than place such a pod blindly
(and have it stuck on a node its volume cannot reach), PreFilter rejects pods with a
persistentVolumeClaim or generic ephemeral volume as UnschedulableAndUnresolvable, with
a FailedScheduling message that says why. Pods with only node-local or API-backed
volumes (emptyDir, configMap, secret, projected, downwardAPI, hostPath, ...) pass: PreFilter
answers Skip and Filter is never needed. Reserve and PreBind have nothing to bind.

VolumeBindingArgs are accepted and validated (bindTimeoutSeconds >= 0; shape as
kube-scheduler validates it) so kube-scheduler configuration files load unchanged; they
have no effect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

from asched.api import Pod
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEventWithHint
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreBindPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    ReservePlugin,
)
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import ArgsError, PluginSpec
from asched.framework.status import Code, Status, skip
from asched.framework.types import PreFilterResult
from asched.plugins.helpers import check_fields, field_path, read_int
from asched.plugins.noderesources.args import UtilizationShapePoint, parse_shape

NAME = "VolumeBinding"

ERR_REASON_PVC = (
    "pod uses PersistentVolumeClaim volumes, which asched does not schedule yet (VolumeBinding)"
)
# Volume sources that go through a PersistentVolumeClaim.
CLAIM_SOURCES = frozenset({"persistentVolumeClaim", "ephemeral"})
DEFAULT_BIND_TIMEOUT_SECONDS = 600

_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_PVC,), NAME)
_SKIP = skip(NAME)


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("bindTimeoutSeconds", "shape"), path)
        timeout = read_int(raw, "bindTimeoutSeconds", path, DEFAULT_BIND_TIMEOUT_SECONDS)
        if timeout < 0:
            raise ArgsError(
                field_path(path, "bindTimeoutSeconds"),
                f"Invalid value: {timeout}: invalid BindTimeoutSeconds, "
                "should not be a negative value",
            )
        shape = parse_shape(raw, path) if raw.get("shape") is not None else None
        return cls(timeout, shape)


Args = VolumeBindingArgs


def uses_claims(pod: Pod) -> bool:
    return any(v.source in CLAIM_SOURCES for v in pod.volumes)


class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions):
    def __init__(self, args: VolumeBindingArgs | None, handle: Handle) -> None:
        self._args = args or VolumeBindingArgs()
        del handle

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if uses_claims(pod):
            return None, _REJECT
        return None, _SKIP

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        # Reached only if PreFilter is disabled: keep the same verdict.
        return _REJECT if uses_claims(pod) else None

    # Reserve / PreBind: kube-scheduler's VolumeBinding assumes and binds claims here. The
    # pods that reach these points have none, so there is nothing to do; the methods keep
    # the plugin on the same extension points as kube-scheduler's.
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # No cluster change makes asched able to bind claims; the periodic flush of the
        # unschedulable pool retries these pods, and the message stays the same.
        return ()


SPEC = PluginSpec(NAME, VolumeBinding, VolumeBindingArgs)
