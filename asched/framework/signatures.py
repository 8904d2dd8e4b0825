"""Pod signatures: which pods are alike enough to reuse each other's Filter and Score results.

kube-scheduler 1.37's OpportunisticBatching (KEP-5598, on by default) asks every plugin of
a profile's PreFilter, Filter, PreScore and Score points to *sign* a pod (fwk.SignPlugin):
each returns fragments naming the pod fields its verdicts depend on, or refuses. The
profile's signature of a pod is those fragments plus spec.schedulerName, serialized
(frameworkImpl.SignPod); two pods with equal signatures get equal feasibility and scores
on nodes in equal states. A profile with a plugin that cannot sign never signs
(computeBatchablePlugins), so out-of-tree plugins turn batching off until they opt in.

The signers mirror k8s.io/kube-scheduler/framework signers.go, field for field, so that
two pods asched finds alike are exactly those kube-scheduler does: a coarser signature
would batch pods kube-scheduler evaluates afresh, and a finer one the reverse, and both
change which node a pod gets once percentageOfNodesToScore samples the nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from asched.api import Pod
from asched.api.labels import NodeSelectorTerm, Requirement
from asched.framework.status import Code, Status

# The fragment keys (signers.go's *SignerName): plugins that look at the same pod field
# sign it under the same key, so it is counted once.
DYNAMIC_RESOURCES = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
NODE_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES = "v1.Pod.Spec.RequiredFeatures()"

#: A fragment's value: anything orjson serializes deterministically (str, int, None,
#: lists, tuples, str-keyed mappings, dataclasses of those).
SignValue = object


@dataclass(frozen=True, slots=True)
class SignFragment:
    key: str
    value: SignValue


#: What sign_pod returns: the fragments, or the Status saying why the pod cannot be signed
#: (Unschedulable for "not signable", Error for a failure).
SignResult = Sequence[SignFragment] | Status


# ---- the shared signers (signers.go) --------------------------------------------------


def host_ports(pod: Pod) -> list[int]:
    """HostPortsSigner: the distinct host ports, sorted (address and protocol are not part
    of it)."""
    return sorted({hp.port for hp in pod.host_ports})


def _requirements(reqs: Sequence[Requirement]) -> list[str]:
    """NodeSelectorRequirementsSigner: each requirement with its values sorted, the list
    sorted."""
    out = [
        orjson.dumps({"key": r.key, "operator": r.operator, "values": sorted(r.values)}).decode()
        for r in reqs
    ]
    return sorted(out)


def _term(t: NodeSelectorTerm) -> dict[str, list[str]]:
    """NodeSelectorTermSigner."""
    return {
        "MatchExpressions": _requirements(t.match_expressions),
        "MatchFields": _requirements(t.match_fields),
    }


def node_affinity(pod: Pod) -> SignValue:
    """NodeAffinitySigner: required and preferred terms, each canonical and sorted; None
    without node affinity."""
    aff = pod.affinity.node_affinity if pod.affinity is not None else None
    if aff is None:
        return None
    preferred = sorted(
        orjson.dumps({"Weight": p.weight, "Preference": _term(p.term)}).decode()
        for p in aff.preferred
    )
    required: list[str] = []
    if aff.required is not None:
        required = sorted(orjson.dumps(_term(t)).decode() for t in aff.required.terms)
    return {"Required": required, "Preferred": preferred}


def tolerations(pod: Pod) -> SignValue:
    """TolerationsSigner: the tolerations ordered by key, then value."""
    return sorted(pod.tolerations, key=lambda t: (t.key, t.value))


def volumes(pod: Pod) -> list[str]:
    """VolumesSigner: every volume source but ConfigMaps and Secrets (which never decide a
    node and differ from pod to pod), serialized and sorted."""
    return sorted(v.source_json for v in pod.volumes if v.source not in ("configMap", "secret"))


def labels(pod: Pod) -> Mapping[str, str]:
    return pod.labels


def unsignable(reason: str, plugin: str) -> Status:
    """The status a plugin returns for a pod it cannot sign (Unschedulable, as Go's)."""
    return Status(Code.UNSCHEDULABLE, (reason,), plugin)
