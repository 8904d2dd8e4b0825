"""The scheduler's view of a PodGroup (scheduling.x-k8s.io/v1alpha1), decoded once per version.

PodGroup is scheduler-plugins' Coscheduling API, which Kubeflow and other operators create:
a gang of pods that must be placed all-or-nothing. Pods join a group with the label
`scheduling.x-k8s.io/pod-group: <name>` (same namespace); Volcano's annotation
`scheduling.k8s.io/group-name` is accepted as a second way, so workloads written for Volcano
can run unchanged. `pod_group_name` is the one place that decides membership.

Also here: `ObjectRef`, the small reference events about non-Pod objects (a PodGroup) use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.api.errors import DecodeError
from asched.api.meta import parse_time
from asched.api.pod import Pod
from asched.api.resources import Resource

GROUP = "scheduling.x-k8s.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "PodGroup"
POD_GROUP_LABEL = f"{GROUP}/pod-group"
# Volcano's way of naming a pod's group (volcano-sh/apis scheduling.k8s.io/group-name).
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"

# status.phase values (scheduler-plugins PodGroupPhase, plus Scheduled which our CRD lists:
# minMember members are bound but fewer than minMember are running yet).
PHASE_PENDING = "Pending"
PHASE_SCHEDULING = "Scheduling"
PHASE_SCHEDULED = "Scheduled"
PHASE_RUNNING = "Running"
PHASE_FINISHED = "Finished"
PHASE_FAILED = "Failed"
PHASE_UNKNOWN = "Unknown"


@dataclass(slots=True, frozen=True)
class ObjectRef:
    """What an event is about when that is not a Pod (core/v1 ObjectReference, trimmed)."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    api_version: str = ""


@dataclass(slots=True, frozen=True)
class PodGroupStatus:
    phase: str = ""
    scheduled: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    # Kept as the API wrote it (RFC 3339), so comparing with what we would write is exact.
    schedule_start_time: str = ""


@dataclass(slots=True)
class PodGroup:
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    creation_timestamp: float = 0.0
    min_member: int = 0
    # Empty when spec.minResources is unset (then no cluster-capacity check is made for it).
    min_resources: Resource = field(default_factory=Resource)
    # None when unset: the plugin's permitWaitingTimeSeconds applies.
    schedule_timeout_seconds: int | None = None
    status: PodGroupStatus = field(default_factory=PodGroupStatus)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def ref(self) -> ObjectRef:
        return ObjectRef(KIND, self.namespace, self.name, self.uid, API_VERSION)


def pod_group_name(pod: Pod) -> str:
    """The name of the PodGroup the pod belongs to (same namespace), or "" for none."""
    return pod.labels.get(POD_GROUP_LABEL) or pod.annotations.get(VOLCANO_GROUP_ANNOTATION, "")


def pod_group_key(pod: Pod) -> str:
    """`namespace/name` of the pod's PodGroup, or "" for pods that are in no group."""
    name = pod_group_name(pod)
    return f"{pod.namespace}/{name}" if name else ""


def _int(raw: Any, path: str, *, minimum: int = 0) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ValueError(f"{path}: expected an integer, got {raw!r}")
    if raw < minimum:
        raise ValueError(f"{path}: must be >= {minimum}, got {raw}")
    return raw


def _status(raw: Any) -> PodGroupStatus:
    if not isinstance(raw, dict):
        return PodGroupStatus()
    return PodGroupStatus(
        phase=str(raw.get("phase") or ""),
        scheduled=_int(raw.get("scheduled") or 0, "status.scheduled"),
        running=_int(raw.get("running") or 0, "status.running"),
        succeeded=_int(raw.get("succeeded") or 0, "status.succeeded"),
        failed=_int(raw.get("failed") or 0, "status.failed"),
        schedule_start_time=str(raw.get("scheduleStartTime") or ""),
    )


def decode_podgroup(raw: dict[str, Any]) -> PodGroup:
    """Decode a scheduling.x-k8s.io/v1alpha1 PodGroup; raises DecodeError naming the field."""
    meta = raw.get("metadata") or {}
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    spec = raw.get("spec") or {}
    try:
        if not isinstance(spec, dict):
            raise ValueError("spec: expected an object")
        min_resources = spec.get("minResources") or {}
        if not isinstance(min_resources, dict):
            raise ValueError("spec.minResources: expected a ResourceList object")
        timeout = spec.get("scheduleTimeoutSeconds")
        return PodGroup(
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
            creation_timestamp=parse_time(meta.get("creationTimestamp")),
            min_member=_int(spec.get("minMember") or 0, "spec.minMember"),
            min_resources=Resource.from_list(min_resources, "spec.minResources"),
            schedule_timeout_seconds=(
                None if timeout is None else _int(timeout, "spec.scheduleTimeoutSeconds")
            ),
            status=_status(raw.get("status")),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        msg = str(exc)
        field_path, _, detail = msg.partition(": ")
        if not detail:
            field_path, detail = "spec", msg
        raise DecodeError(KIND, key, field_path, detail) from None
