"""Pod signatures: alike pods share one, any field a plugin decides on tells them apart,
and a pod or profile kube-scheduler cannot sign gets none (signers.go, SignPod)."""

from __future__ import annotations

import pytest

from asched.api import Pod
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.signatures import SignFragment, SignResult, unsignable
from asched.testing import make_pod
from asched.testing.builders import PodBuilder
from asched.testing.profiles import default_profile
from tests.unit.framework.fakes import EmptyStores, framework


def _fwk(*, batchable: bool = True) -> Framework:
    spec, registry = default_profile(batchable=batchable)
    return Framework(spec, registry, EmptyStores())


def _base(name: str) -> PodBuilder:
    return make_pod(name).cpu("100m").memory("64Mi").label("app", "web").image("nginx:1.27")


def _sig(pod: Pod, fwk: Framework | None = None) -> bytes | None:
    return (fwk or _fwk()).sign_pod(pod)


def test_alike_pods_share_a_signature() -> None:
    fwk = _fwk()
    a, b = _sig(_base("a").obj(), fwk), _sig(_base("b").uid("other").obj(), fwk)
    assert a is not None
    assert a == b


def test_the_default_profile_signs_no_pod() -> None:
    """PodTopologySpread's system default constraints refuse every pod."""
    assert _sig(_base("a").obj(), _fwk(batchable=False)) is None


def test_a_profile_with_a_plugin_that_cannot_sign_never_signs() -> None:
    """computeBatchablePlugins: the test plugins implement no sign_pod."""
    assert framework().sign_pod(_base("a").obj()) is None


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.label("tier", "2"),  # InterPodAffinity: existing pods' terms see labels
        lambda b: b.cpu("200m"),  # NodeResourcesFit / BalancedAllocation
        lambda b: b.toleration("dedicated", "gpu", "NoSchedule"),  # TaintToleration
        lambda b: b.node_selector({"disk": "ssd"}),  # NodeAffinity
        lambda b: b.node_affinity_in("zone", ["a"]),
        lambda b: b.image("redis:7"),  # ImageLocality
        lambda b: b.host_port(8080),  # NodePorts
        lambda b: b.pvc("data"),  # the volume plugins
        lambda b: b.scheduler("other-scheduler"),
    ],
    ids=[
        "labels",
        "requests",
        "tolerations",
        "node-selector",
        "node-affinity",
        "image",
        "host-port",
        "pvc",
        "scheduler-name",
    ],
)
def test_a_field_some_plugin_reads_tells_pods_apart(change: object) -> None:
    fwk = _fwk()
    other = change(_base("b"))  # type: ignore[operator]
    assert _sig(other.obj(), fwk) is not None
    assert _sig(other.obj(), fwk) != _sig(_base("a").obj(), fwk)


def test_config_map_and_secret_volumes_do_not_count() -> None:
    """VolumesSigner skips them: they never decide a node and differ per pod."""
    b = _base("b")
    b._spec["volumes"] = [
        {"name": "cfg", "configMap": {"name": "b-config"}},
        {"name": "tok", "secret": {"secretName": "b-token"}},
    ]
    assert _sig(b.obj()) == _sig(_base("a").obj())


def test_image_names_are_normalized_and_a_set() -> None:
    """ImageLocality signs normalized names: "nginx" is "nginx:latest", twice is once."""
    a = make_pod("a").cpu("100m").image("nginx").obj()
    b = make_pod("b").cpu("100m").image("nginx:latest").obj()
    assert _sig(a) == _sig(b)


def test_toleration_order_does_not_count() -> None:
    a = _base("a").toleration("a", "1", "NoSchedule").toleration("b", "2", "NoSchedule")
    b = _base("b").toleration("b", "2", "NoSchedule").toleration("a", "1", "NoSchedule")
    assert _sig(a.obj()) == _sig(b.obj())


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.pod_affinity("kubernetes.io/hostname", {"app": "web"}, anti=True),
        lambda b: b.spread(1, "topology.kubernetes.io/zone", {"app": "web"}),
        lambda b: b.resource_claim("gpu", claim="gpu-claim"),
    ],
    ids=["pod-anti-affinity", "topology-spread", "resource-claim"],
)
def test_pods_kube_scheduler_cannot_sign(change: object) -> None:
    pod = change(_base("a")).obj()  # type: ignore[operator]
    assert _sig(pod) is None


class _Tiered:
    """An out-of-tree Filter plugin whose verdict reads an annotation, and signs it."""

    name = "Tiered"

    def __init__(self, args: None, handle: object) -> None:
        del args, handle

    def filter(self, state: object, pod: Pod, node_info: object) -> None:
        return None

    def sign_pod(self, pod: Pod) -> SignResult:
        return (SignFragment("example.com/tier", pod.annotations.get("example.com/tier", "")),)


class _Silent(_Tiered):
    name = "Silent"
    sign_pod = None  # type: ignore[assignment]


def _with(cls: type) -> Framework:
    spec, registry = default_profile(batchable=True)
    registry.register(PluginSpec(cls.name, cls))  # type: ignore[attr-defined]
    points = {k: list(v) for k, v in spec.plugins.items()}
    points["filter"].append((cls.name, 0))  # type: ignore[attr-defined]
    return Framework(
        ProfileSpec(spec.scheduler_name, points, spec.plugin_args), registry, EmptyStores()
    )


def test_an_out_of_tree_plugin_that_signs_keeps_batching_and_adds_its_fields() -> None:
    fwk = _with(_Tiered)
    gold = _base("a").annotation("example.com/tier", "gold").obj()
    silver = _base("b").annotation("example.com/tier", "silver").obj()
    assert _sig(gold, fwk) is not None
    assert _sig(gold, fwk) != _sig(silver, fwk)


def test_an_out_of_tree_plugin_without_sign_pod_turns_batching_off() -> None:
    assert _sig(_base("a").obj(), _with(_Silent)) is None


class _Refusing(_Tiered):
    """Declares that it refuses often; refuses this pod, and counts its calls."""

    name = "Refusing"
    refuses_signing_often = True
    calls = 0

    def sign_pod(self, pod: Pod) -> SignResult:
        type(self).calls += 1
        return unsignable("never", self.name)


def test_a_plugin_that_says_it_refuses_often_is_asked_first() -> None:
    """RefusingSignPlugin: the profile's default plugins all come after it, in profile
    order, and the refusal means no signature."""
    fwk = _with(_Refusing)
    order = [p.name for p in fwk._signers or ()]
    assert order[:4] == ["PodTopologySpread", "InterPodAffinity", "DynamicResources", "Refusing"]
    assert order[4:] == [n for n in order[4:] if n != "Refusing"]
    assert _sig(_base("a").obj(), fwk) is None
    assert _Refusing.calls == 1


def test_a_plugin_that_does_not_say_so_keeps_its_profile_place() -> None:
    """It signs after every default Filter plugin: it is the last one enabled at Filter."""
    order = [p.name for p in _with(_Tiered)._signers or ()]
    assert order.index("Tiered") == order.index("TaintToleration") + 1
