"""`--feature-gates`: kube-scheduler's gates, each accepted only at values asched honours.

A gate reaches asched from a user's kube-scheduler command line, or from a workload of
kube-scheduler's scheduler_perf suite (benchmarks/scheduler_perf passes a workload's gates
to both schedulers). Each gate asched knows is one of:
- a switch: asched honours both values (`OpportunisticBatching`, `DRAWorkloadResourceClaims`);
- a gate whose setting changes nothing asched decides or writes (`SchedulerAsyncAPICalls`):
  both values are accepted and do the same;
- a gate whose behaviour asched always has, on or off (`only`): that value is accepted, the
  other is refused with the reason;
- a gate kube-scheduler 1.37.2 locks to its default (LockToDefault): the default is accepted
  and the other value refused with component-base's own message.
Any other name is an error, so a gate misspelt or meant for another component is not
silently ignored. The syntax is kube-scheduler's: `Name=true|false`, comma separated.

The values in force are process-wide, as kube-scheduler's utilfeature.DefaultFeatureGate
is: `asched run` sets them once at startup (`set_current`), before any profile is built,
and plugins read them when they are constructed (Go's feature.Features), never per cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Gate:
    """How asched treats one kube-scheduler gate."""

    #: kube-scheduler 1.37.2's default (pkg/features/kube_features.go).
    default: bool
    #: The one value asched honours, or None when it honours both.
    only: bool | None = None
    #: LockToDefault in 1.37.2: kube-scheduler refuses the other value as well.
    locked: bool = False
    #: Why the other value cannot be honoured (for `only`).
    why: str = ""
    #: Both values accepted, and asched runs the same with either.
    inert: bool = False

    @property
    def value(self) -> bool:
        """asched's value when the flag does not name the gate."""
        return self.default if self.only is None else self.only


def _locked(default: bool) -> Gate:
    return Gate(default, only=default, locked=True)


_DRA_ALWAYS = (
    "asched's structured allocator always has this feature, as the incubating allocator "
    "kube-scheduler runs with 1.37's default gates (dynamicresources.go NewAllocator)"
)
_DRA_NEVER = (
    "asched's structured allocator does not implement this alpha feature "
    "(structured.Features in dynamicresources.go)"
)

GATES: Mapping[str, Gate] = {
    # Beta, on: asched.framework.opportunistic (schedule_one.go, framework.go).
    "OpportunisticBatching": Gate(True),
    # Beta, off: PodGroup ResourceClaims (DynamicResources binds a claim a pod shares
    # through its PodGroup's spec.resourceClaims to the PodGroup).
    "DRAWorkloadResourceClaims": Gate(False),
    # Alpha, off: CompositePodGroup (scheduling.k8s.io/v1alpha3) hierarchies of PodGroups
    # placed together (asched.scheduler.compositecycle). Go also needs GenericWorkload and
    # TopologyAwareWorkloadScheduling, which asched always has on (below).
    "CompositePodGroup": Gate(False),
    # Beta, off. In Go it only decides whether scheduler.go builds an APIDispatcher, i.e.
    # whether bindings, status patches and victim deletions go through a per-object call
    # queue that merges a pod's pending calls (backend/api_dispatcher) or are sent directly;
    # no placement, status or event differs. asched sends its writes off the scheduling
    # cycle either way, coalesced per object (scheduler/statuspatcher.py) and never a
    # status patch after the pod's binding, which both of Go's paths guarantee.
    "SchedulerAsyncAPICalls": Gate(False, inert=True),
    # Beta, on. prepareCandidate (the gate off) deletes the victims inside PostFilter, so
    # the scheduling cycle would await the network, which asched never does.
    "SchedulerAsyncPreemption": Gate(
        True,
        only=True,
        why="asched preempts only asynchronously (Executor.prepareCandidateAsync); the "
        "synchronous prepareCandidate would await the victims' deletions inside the "
        "scheduling cycle",
    ),
    # Beta, off in kube-scheduler; asched always has it on (config/plugin_sets.py).
    "GenericWorkload": Gate(
        False,
        only=True,
        why="asched always schedules pod groups as kube-scheduler does with it on "
        "(GangScheduling among the default plugins as default_plugins.go "
        "applyGangScheduling adds it, pod-group queueing and snapshots); it has no path "
        "that ignores them",
    ),
    # Alpha, off in kube-scheduler; asched always has it on (config/plugin_sets.py).
    "TopologyAwareWorkloadScheduling": Gate(
        False,
        only=True,
        why="asched always places pod groups by their topology constraints "
        "(TopologyPlacementGenerator and PodGroupPodsCount among the default plugins, as "
        "default_plugins.go applyTopologyAwareWorkloadScheduling adds them)",
    ),
    # Beta and GA gates of the structured allocator (asched.plugins.dynamicresources).
    "DRAConsumableCapacity": Gate(True, only=True, why=_DRA_ALWAYS),
    "DRAPartitionableDevices": Gate(True, only=True, why=_DRA_ALWAYS),
    "DRADeviceTaints": Gate(True, only=True, why=_DRA_ALWAYS),
    "DRADeviceCompatibilityGroups": Gate(False, only=False, why=_DRA_NEVER),
    "DRAListTypeAttributes": Gate(False, only=False, why=_DRA_NEVER),
    # GA and locked on in 1.37; asched has each: DynamicResources among the default
    # plugins, DRA extended resources (dynamicresources/extended.py), firstAvailable
    # requests (allocator.py), device binding conditions (readiness.py), requests from
    # status.resources (api/podrequests.py), the NodeDeclaredFeatures plugin, and
    # nodeAffinityPolicy/nodeTaintsPolicy (podtopologyspread/constraints.py).
    "DynamicResourceAllocation": _locked(True),
    "DRAExtendedResource": _locked(True),
    "DRAPrioritizedList": _locked(True),
    "DRAResourceClaimDeviceStatus": _locked(True),
    "InPlacePodVerticalScaling": _locked(True),
    "NodeDeclaredFeatures": _locked(True),
    "NodeInclusionPolicyInPodTopologySpread": _locked(True),
}

#: Gate -> asched's value when the flag does not name it.
DEFAULTS: Mapping[str, bool] = {name: gate.value for name, gate in GATES.items()}

#: The gates whose two values asched runs differently (the flag's help lists them).
SWITCHES: tuple[str, ...] = tuple(
    name for name, gate in GATES.items() if gate.only is None and not gate.inert
)

_current: dict[str, bool] = dict(DEFAULTS)


class FeatureGateError(ValueError):
    pass


def parse(value: str) -> dict[str, bool]:
    """The gates' values after applying `value` to the defaults."""
    gates = dict(DEFAULTS)
    for part in value.split(","):
        item = part.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name} (write {name}=true|false)")
        gate = GATES.get(name)
        if gate is None:
            known = ", ".join(sorted(GATES))
            raise FeatureGateError(f"unrecognized feature gate: {name} (known: {known})")
        flag = raw.strip().lower()
        if flag not in ("true", "false"):
            raise FeatureGateError(f"invalid value of {name}={raw.strip()}, err: not a bool")
        gates[name] = _accepted(name, gate, flag == "true")
    return gates


def _accepted(name: str, gate: Gate, value: bool) -> bool:
    if gate.only is None or value == gate.only:
        return value
    shown, fixed = str(value).lower(), str(gate.only).lower()
    if gate.locked:
        # component-base featuregate.(*featureGate).Set's wording.
        raise FeatureGateError(
            f"cannot set feature gate {name} to {shown}, feature is locked to {fixed}"
        )
    raise FeatureGateError(f"cannot set feature gate {name} to {shown}: {gate.why}")


def set_current(gates: Mapping[str, bool]) -> None:
    """Put `gates` (parse()'s answer) in force for the process."""
    unknown = set(gates) - set(GATES)
    if unknown:
        raise FeatureGateError(f"unrecognized feature gate: {', '.join(sorted(unknown))}")
    for name, value in gates.items():
        _accepted(name, GATES[name], value)
    _current.clear()
    _current.update(DEFAULTS)
    _current.update(gates)


def enabled(name: str) -> bool:
    """Whether gate `name` is on in this process; a name not in GATES is a bug."""
    return _current[name]
