"""What became of a scenario's PersistentVolumeClaims, and how two runs' claims compare.

Read for scenarios that create workloads or say `expect_claims` (Scenario.compares_claims).
What is deterministic, and so compared:
- each claim's phase, and whether the PV it is bound to has node affinity naming the
  node of the pod that uses it (a local or provisioned volume must sit where its pod runs);
- the multiset of volumes bound, by scenario-local name (`{{cluster:x}}` -> x; a volume
  the fake provisioner made is PROVISIONED, its name holds the claim's uid): which replica
  got which local PV is a tie, but the set of PVs used is not;
- for the claims of `expect_claims`, the volume itself (the smallest PV that fits).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

HOSTNAME_LABEL = "kubernetes.io/hostname"
#: The local name of any volume that no scenario declared (the fake provisioner's).
PROVISIONED = "<provisioned>"
BOUND = "Bound"


@dataclass(frozen=True, slots=True)
class ClaimOutcome:
    #: status.phase; empty when the claim does not exist.
    phase: str = ""
    #: The bound volume's scenario-local name, PROVISIONED, or empty.
    volume: str = ""
    #: The PV's node affinity names the node of the bound pod using the claim; None when
    #: that is not known (unbound, no bound pod uses it, or the PV is gone).
    on_node: bool | None = None

    def short(self) -> str:
        where = {True: "on its pod's node", False: "NOT on its pod's node", None: "-"}
        return f"{self.phase or 'missing'} {self.volume or '-'} {where[self.on_node]}"


def pv_hostnames(pv: Mapping[str, Any]) -> set[str]:
    """The hostname values of a PV's required node affinity (what a local PV pins)."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}
    return {
        value
        for term in required.get("nodeSelectorTerms", ())
        for expr in term.get("matchExpressions", ())
        if expr.get("key") == HOSTNAME_LABEL
        for value in expr.get("values", ())
    }


def read_claims(
    claims: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    volumes: Mapping[str, Mapping[str, Any]],
    local_volume: Callable[[str], str],
) -> dict[str, ClaimOutcome]:
    """The outcome of every claim of one namespace; *local_volume* maps a real PV name to
    the scenario's name for it (PROVISIONED for others). kwok nodes carry their real name
    as kubernetes.io/hostname, so a pod's nodeName is compared with the PV's hostnames."""
    node_of: dict[str, str] = {}
    for pod in pods:
        node = pod["spec"].get("nodeName", "")
        for v in pod["spec"].get("volumes") or ():
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim and node:
                node_of[claim] = node
    out = {}
    for c in claims:
        name = c["metadata"]["name"]
        phase = (c.get("status") or {}).get("phase", "")
        volume = c["spec"].get("volumeName", "") if phase == BOUND else ""
        pv = volumes.get(volume) if volume else None
        on_node = None
        if pv is not None and name in node_of:
            on_node = node_of[name] in pv_hostnames(pv)
        out[name] = ClaimOutcome(phase, local_volume(volume) if volume else "", on_node)
    return out


def claim_differences(
    expected: Mapping[str, str], a: Mapping[str, ClaimOutcome], k: Mapping[str, ClaimOutcome]
) -> list[str]:
    """How two runs' claims differ (asched first, kube-scheduler second)."""
    out = []
    for name in sorted(set(a) | set(k)):
        ac, kc = a.get(name, ClaimOutcome()), k.get(name, ClaimOutcome())
        if (ac.phase, ac.on_node) != (kc.phase, kc.on_node):
            out.append(f"claim {name}: asched {ac.short()}, kube-scheduler {kc.short()}")
    a_vols = sorted(c.volume for c in a.values() if c.volume)
    k_vols = sorted(c.volume for c in k.values() if c.volume)
    if a_vols != k_vols:
        out.append(f"volumes bound: asched {a_vols}, kube-scheduler {k_vols}")
    for name in sorted(expected):
        ac, kc = a.get(name, ClaimOutcome()), k.get(name, ClaimOutcome())
        if ac.volume != kc.volume:
            out.append(f"claim {name}: asched bound {ac.volume!r}, kube-scheduler {kc.volume!r}")
    return out


def claim_problems(
    expected: Mapping[str, str], workload_claims: Iterable[str], got: Mapping[str, ClaimOutcome]
) -> list[str]:
    """Where one run's claims contradict the scenario: an `expect_claims` claim bound to
    another volume, or a workload's claim not Bound on its pod's node."""
    problems = []
    for name, volume in sorted(expected.items()):
        c = got.get(name, ClaimOutcome())
        if c.phase != BOUND or c.volume != volume:
            problems.append(f"expected claim {name} Bound to {volume}, got {c.short()}")
    for name in workload_claims:
        c = got.get(name, ClaimOutcome())
        if c.phase != BOUND or c.on_node is not True:
            problems.append(f"expected claim {name} Bound on its pod's node, got {c.short()}")
    return problems
