"""`--feature-gates`: the kube-scheduler gates asched lets a user turn off.

Only gates that change asched's behaviour are accepted; any other name is an error, so a
gate misspelt or meant for another component is not silently ignored. The syntax is
kube-scheduler's: `Name=true|false`, comma separated.

The values in force are process-wide, as kube-scheduler's utilfeature.DefaultFeatureGate
is: `asched run` sets them once at startup (`set_current`), before any profile is built,
and plugins read them when they are constructed (Go's feature.Features), never per cycle.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Gate -> its default at Kubernetes 1.37.
DEFAULTS: Mapping[str, bool] = {
    # Beta, on (pkg/features/kube_features.go): asched.framework.opportunistic.
    "OpportunisticBatching": True,
    # Beta, off: PodGroup ResourceClaims (DynamicResources binds a claim a pod shares
    # through its PodGroup's spec.resourceClaims to the PodGroup).
    "DRAWorkloadResourceClaims": False,
    # Alpha, off: CompositePodGroup (scheduling.k8s.io/v1alpha3) hierarchies of PodGroups
    # placed together (asched.scheduler.compositecycle). Go also needs GenericWorkload and
    # TopologyAwareWorkloadScheduling, which asched always behaves as on.
    "CompositePodGroup": False,
}

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
        if name not in DEFAULTS:
            known = ", ".join(sorted(DEFAULTS))
            raise FeatureGateError(f"unrecognized feature gate: {name} (known: {known})")
        flag = raw.strip().lower()
        if flag not in ("true", "false"):
            raise FeatureGateError(f"invalid value of {name}={raw.strip()}, err: not a bool")
        gates[name] = flag == "true"
    return gates


def set_current(gates: Mapping[str, bool]) -> None:
    """Put `gates` (parse()'s answer) in force for the process."""
    unknown = set(gates) - set(DEFAULTS)
    if unknown:
        raise FeatureGateError(f"unrecognized feature gate: {', '.join(sorted(unknown))}")
    _current.clear()
    _current.update(DEFAULTS)
    _current.update(gates)


def enabled(name: str) -> bool:
    """Whether gate `name` is on in this process; a name not in DEFAULTS is a bug."""
    return _current[name]
