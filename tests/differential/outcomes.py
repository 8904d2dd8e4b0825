"""What a scheduler did with a scenario's pods, read back from the API server.

A Snapshot is one look at the run's pods (by the run label) and at all events.k8s.io/v1
Events (both schedulers write that API; kube-scheduler 1.37 through client-go's events
broadcaster). From it come the per-pod outcomes the comparison works on:
- the node (scenario-local name) or none;
- the first FailedScheduling note. kube-scheduler's broadcaster keys a series without the
  message, so a later failure with other words only bumps the first Event's count: the
  first note is the one both schedulers leave readable;
- the PodScheduled=False condition message (the latest failure, on both);
  in both, an object key in the run's namespace (`<ns>/c`, a claim) reads `<namespace>/c`;
- the Scheduled note with namespace, pod and node replaced by placeholders.
For native gangs it also reads the run's PodGroups (scheduling.k8s.io/v1beta1): each
group's PodGroupInitiallyScheduled condition (status, reason, message), with the
namespace replaced by `<namespace>` and node names made scenario-local. For DRA
scenarios that compare allocations it reads the run's ResourceClaims (allocations.py).
`Snapshot.dump` is the raw record (every event with its series count, every condition)
that the runner writes beside the scheduler logs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asched.localcluster import ClusterClient
from tests.differential.allocations import AllocationOutcome, read_allocations
from tests.differential.claims import ClaimOutcome, pv_hostnames, read_claims
from tests.differential.layout import RUN_LABEL, Placement, run_label
from tests.differential.scenario import POD_GROUP_API
from tests.differential.schedulers import Side

FAILED = "FailedScheduling"
SCHEDULED = "Scheduled"
#: The PodGroup condition the gang cycle writes (k8s.io/api scheduling/v1beta1).
GROUP_CONDITION = "PodGroupInitiallyScheduled"
PVS = "/api/v1/persistentvolumes"
RESOURCE_CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class PodOutcome:
    node: str = ""
    nominated: str = ""
    first_failure: str = ""
    condition: str = ""
    scheduled_note: str = ""
    reasons: tuple[str, ...] = ()
    #: Seconds from the last FailedScheduling event before the Scheduled one to that
    #: Scheduled event (eventTime, microseconds); None without both.
    retry_gap: float | None = None

    @property
    def scheduled(self) -> bool:
        return bool(self.node)

    def short(self) -> str:
        if self.node:
            return f"bound to {self.node}"
        if self.first_failure:
            return f"unschedulable: {self.first_failure!r}"
        return "pending without events"


@dataclass(frozen=True, slots=True)
class GroupOutcome:
    """A PodGroup's PodGroupInitiallyScheduled condition; all empty: none (or no group)."""

    status: str = ""
    reason: str = ""
    message: str = ""

    @property
    def state(self) -> str:
        """What expect_group compares with: the condition's status, or `none`."""
        return self.status or "none"

    def short(self) -> str:
        if not self.status:
            return "no PodGroupInitiallyScheduled condition"
        return f"{self.status}/{self.reason}: {self.message!r}"


@dataclass(frozen=True, slots=True)
class ScenarioOutcome:
    pods: Mapping[str, PodOutcome]
    #: Existing pods still present at the end (the others were preempted).
    existing_left: frozenset[str] = frozenset()
    #: Bound pods per value of the scenario's expect_spread node label.
    spread: Mapping[str, int] = field(default_factory=dict)
    #: The scenario's PodGroups by name.
    groups: Mapping[str, GroupOutcome] = field(default_factory=dict)
    #: Pods unbound and without any event at the end of the first round (before `then`).
    silent: frozenset[str] = frozenset()
    #: The namespace's claims by name (only for Scenario.compares_claims).
    claims: Mapping[str, ClaimOutcome] = field(default_factory=dict)
    #: The namespace's DRA ResourceClaims by name (only for compares_allocations).
    allocations: Mapping[str, AllocationOutcome] = field(default_factory=dict)


def _when(event: Mapping[str, Any]) -> datetime:
    stamp = event.get("eventTime") or event["metadata"]["creationTimestamp"]
    return datetime.fromisoformat(stamp)


@dataclass(frozen=True, slots=True)
class Reads:
    """What a snapshot reads beside pods and events (only what some scenario needs)."""

    #: The run's native PodGroups.
    groups: bool = False
    #: The run's namespaces' claims, and every PV.
    volumes: bool = False
    #: The run's namespaces' DRA ResourceClaims.
    resource_claims: bool = False


def retry_gap(events: list[dict[str, Any]]) -> float | None:
    """Time from the last failure to the binding (events sorted by time)."""
    last_failure: datetime | None = None
    for e in events:
        if e.get("reason") == FAILED:
            last_failure = _when(e)
        elif e.get("reason") == SCHEDULED and last_failure is not None:
            return (_when(e) - last_failure).total_seconds()
    return None


@dataclass(slots=True)
class Snapshot:
    pods: dict[Key, dict[str, Any]]
    events: dict[Key, list[dict[str, Any]]]
    #: The run's PodGroups by (namespace, name); read only when the run has any.
    groups: dict[Key, dict[str, Any]] = field(default_factory=dict)
    #: The claims of the run's namespaces by (namespace, name), and the PVs by name;
    #: read only for scenarios that compare claims.
    claims: dict[Key, dict[str, Any]] = field(default_factory=dict)
    volumes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: DRA ResourceClaims of the run's namespaces by (namespace, name); read only for
    #: scenarios that compare allocations.
    resource_claims: dict[Key, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    async def take(
        cls, admin: ClusterClient, run: str, side: Side, reads: Reads = Reads()
    ) -> Snapshot:
        selector = {"labelSelector": f"{RUN_LABEL}={run_label(run, side)}"}
        pods = await admin.list("/api/v1/pods", params=selector)
        namespaces = {p["metadata"]["namespace"] for p in pods}
        events: dict[Key, list[dict[str, Any]]] = {}
        for e in await admin.list("/apis/events.k8s.io/v1/events"):
            ref = e.get("regarding") or {}
            if ref.get("kind") == "Pod" and ref.get("namespace") in namespaces:
                events.setdefault((ref["namespace"], ref["name"]), []).append(e)
        for evs in events.values():
            evs.sort(key=_when)
        by_key: dict[Key, dict[str, Any]] = {}
        if reads.groups:
            for g in await admin.list(f"/apis/{POD_GROUP_API}/podgroups", params=selector):
                by_key[(g["metadata"]["namespace"], g["metadata"]["name"])] = g
        claims: dict[Key, dict[str, Any]] = {}
        volumes: dict[str, dict[str, Any]] = {}
        if reads.volumes:
            for c in await admin.list("/api/v1/persistentvolumeclaims"):
                if c["metadata"]["namespace"] in namespaces:
                    claims[(c["metadata"]["namespace"], c["metadata"]["name"])] = c
            volumes = {v["metadata"]["name"]: v for v in await admin.list(PVS)}
        resource_claims: dict[Key, dict[str, Any]] = {}
        if reads.resource_claims:
            for c in await admin.list(RESOURCE_CLAIMS):
                if c["metadata"]["namespace"] in namespaces:
                    resource_claims[(c["metadata"]["namespace"], c["metadata"]["name"])] = c
        pods_by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
        return cls(pods_by_key, events, by_key, claims, volumes, resource_claims)

    def reasons(self, key: Key) -> list[str]:
        return [e.get("reason", "") for e in self.events.get(key, ())]

    def bound(self, key: Key) -> bool:
        """Bound, with its Scheduled event."""
        pod = self.pods.get(key)
        return (
            pod is not None
            and bool(pod["spec"].get("nodeName"))
            and (SCHEDULED in self.reasons(key))
        )

    def settled(self, key: Key) -> bool:
        """Bound with its Scheduled event, or failed and not waiting on a preemption."""
        pod = self.pods.get(key)
        if pod is None:
            return False
        reasons = self.reasons(key)
        if pod["spec"].get("nodeName"):
            return SCHEDULED in reasons
        return FAILED in reasons and not pod.get("status", {}).get("nominatedNodeName")

    def fingerprint(self) -> tuple[object, ...]:
        """Changes whenever a pod binds or an Event is written or counted again."""
        bound = sorted((k, p["spec"].get("nodeName", "")) for k, p in self.pods.items())
        events = sorted(
            (k, e["metadata"]["name"], (e.get("series") or {}).get("count", 1))
            for k, evs in self.events.items()
            for e in evs
        )
        conditions = sorted(
            (k, c.get("type", ""), c.get("status", ""), c.get("message", ""))
            for k, g in self.groups.items()
            for c in (g.get("status") or {}).get("conditions", ())
        )
        claims = sorted(
            (k, (c.get("status") or {}).get("phase", ""), c["spec"].get("volumeName", ""))
            for k, c in self.claims.items()
        )
        # A claim's allocation and reservations: its resourceVersion changes with them.
        dra = sorted((k, c["metadata"]["resourceVersion"]) for k, c in self.resource_claims.items())
        return tuple(bound), tuple(events), tuple(conditions), tuple(claims), tuple(dra)

    def group_outcome(self, placement: Placement, key: Key) -> GroupOutcome:
        group = self.groups.get(key)
        condition = next(
            (
                c
                for c in ((group or {}).get("status") or {}).get("conditions", ())
                if c.get("type") == GROUP_CONDITION
            ),
            None,
        )
        if condition is None:
            return GroupOutcome()
        message = condition.get("message", "").replace(key[0], "<namespace>")
        message = message.replace(f"{placement.key}-", "")
        return GroupOutcome(condition.get("status", ""), condition.get("reason", ""), message)

    def dump(self, placement: Placement, side: Side) -> dict[str, Any]:
        """Everything the run left of one scenario, for reading (not for comparing):
        each pod's node and conditions, each of its Events in order with its series
        count, and each PodGroup's spec, generation and conditions."""
        ns = placement.namespace(side)
        names = [p.name for p in placement.scenario.existing] + list(placement.scenario.pod_names)
        pods: dict[str, Any] = {}
        for name in names:
            pod = self.pods.get((ns, name))
            pods[name] = {
                "node": placement.local_node((pod or {}).get("spec", {}).get("nodeName", "")),
                "conditions": ((pod or {}).get("status") or {}).get("conditions", []),
                "nominatedNodeName": ((pod or {}).get("status") or {}).get("nominatedNodeName", ""),
                "events": [
                    {
                        "reason": e.get("reason", ""),
                        "note": e.get("note", ""),
                        "count": (e.get("series") or {}).get("count", 1),
                        "eventTime": e.get("eventTime"),
                        "lastObservedTime": (e.get("series") or {}).get("lastObservedTime"),
                        "name": e["metadata"]["name"],
                    }
                    for e in self.events.get((ns, name), ())
                ],
            }
        groups = {
            g.name: {
                "generation": (self.groups.get((ns, g.name)) or {})
                .get("metadata", {})
                .get("generation"),
                "spec": (self.groups.get((ns, g.name)) or {}).get("spec"),
                "status": (self.groups.get((ns, g.name)) or {}).get("status"),
            }
            for g in placement.scenario.pod_groups
        }
        claims = {
            name: {
                "phase": (c.get("status") or {}).get("phase", ""),
                "volumeName": c["spec"].get("volumeName", ""),
                "pvHostnames": sorted(
                    pv_hostnames(self.volumes.get(c["spec"].get("volumeName", ""), {}))
                ),
            }
            for (cns, name), c in self.claims.items()
            if cns == ns
        }
        resource_claims = {
            name: c.get("status") or {}
            for (cns, name), c in self.resource_claims.items()
            if cns == ns
        }
        return {
            "namespace": ns,
            "pods": pods,
            "groups": groups,
            "claims": claims,
            "resourceClaims": resource_claims,
        }

    def pod_outcome(self, placement: Placement, key: Key) -> PodOutcome:
        pod = self.pods.get(key)
        if pod is None:
            return PodOutcome(reasons=("<missing>",))
        ns, name = key
        node = pod["spec"].get("nodeName", "")
        status = pod.get("status", {})
        condition = next(
            (
                c.get("message", "")
                for c in status.get("conditions", ())
                if c["type"] == "PodScheduled" and c["status"] == "False"
            ),
            "",
        )
        events = self.events.get(key, [])
        failures = [e.get("note", "") for e in events if e.get("reason") == FAILED]
        scheduled = [e.get("note", "") for e in events if e.get("reason") == SCHEDULED]
        note = scheduled[0] if scheduled else ""
        if note:
            note = note.replace(f"{ns}/{name}", "<pod>").replace(node, "<node>")
        local = f"{ns}/"
        return PodOutcome(
            node=placement.local_node(node) if node else "",
            nominated=placement.local_node(status.get("nominatedNodeName", "")),
            first_failure=failures[0].replace(local, "<namespace>/") if failures else "",
            condition=condition.replace(local, "<namespace>/") if not node else "",
            scheduled_note=note,
            reasons=tuple(sorted({e.get("reason", "") for e in events})),
            retry_gap=retry_gap(events),
        )

    def scenario_outcome(
        self,
        placement: Placement,
        side: Side,
        node_labels: Mapping[str, Mapping[str, str]],
        first_round: Snapshot | None = None,
    ) -> ScenarioOutcome:
        """The scenario's outcome in this snapshot; `silent` comes from *first_round*
        (default: this snapshot), the look taken before the `then` actions."""
        s = placement.scenario
        ns = placement.namespace(side)
        first = self if first_round is None else first_round
        silent = frozenset(
            name
            for name in s.pod_names
            if not (o := first.pod_outcome(placement, (ns, name))).scheduled and not o.reasons
        )
        pods = {name: self.pod_outcome(placement, (ns, name)) for name in s.pod_names}
        left = frozenset(p.name for p in s.existing if (ns, p.name) in self.pods)
        spread: Counter[str] = Counter()
        if s.expect_spread:
            for outcome in pods.values():
                if outcome.node:
                    labels = node_labels[placement.node_name(outcome.node)]
                    spread[labels.get(s.expect_spread, "")] += 1
        groups = {g.name: self.group_outcome(placement, (ns, g.name)) for g in s.pod_groups}
        claims = {}
        if s.compares_claims:
            claims = read_claims(
                [c for (cns, _), c in self.claims.items() if cns == ns],
                [p for (pns, _), p in self.pods.items() if pns == ns],
                self.volumes,
                lambda real: placement.local_volume(side, real),
            )
        allocations = {}
        if s.compares_allocations:
            allocations = read_allocations(
                [c for (cns, _), c in self.resource_claims.items() if cns == ns],
                placement.local_node,
            )
        return ScenarioOutcome(pods, left, dict(spread), groups, silent, claims, allocations)
