"""DynamicResources keeps its slice index, each node's pools and the devices' selector
answers across pods (pools.SliceIndexCache, devicememo.py); a slice or DeviceTaintRule
event, or a node's new labels, must still be seen by the next pod."""

from __future__ import annotations

from typing import Any

from asched.api.dra import decode_device_taint_rule, decode_resource_slice
from asched.plugins.dynamicresources.pools import SliceIndex, SliceIndexCache
from asched.plugins.dynamicresources.tracker import RESOURCE_SLICES
from asched.testing import dra
from asched.testing.builders import make_pod
from tests.unit.plugins.test_dynamicresources import GPU, World, fits, gpu, gpu_slice

H100 = f'device.attributes["{GPU}"].model == "h100"'


def _h100_world() -> World:
    return World(
        classes=(dra.device_class("gpu", H100),),
        claims=(
            dra.resource_claim("c1", dra.device_request("gpu", "gpu")),
            dra.resource_claim("c2", dra.device_request("gpu", "gpu")),
        ),
        slices=(gpu_slice("n2", gpu("gpu-0", "a100")),),
    )


def _pod(name: str, claim: str) -> Any:
    return make_pod(name).resource_claim("gpu", claim=claim).obj()


def _upsert_slice(w: World, raw: dict[str, Any]) -> None:
    store = w.handle.store(RESOURCE_SLICES)
    store.upsert(raw["metadata"]["name"], decode_resource_slice(raw), "2")  # type: ignore[attr-defined]


def test_an_updated_slice_is_seen_by_the_next_pod() -> None:
    w = _h100_world()
    assert fits(w.filter_all(_pod("p1", "c1"))[2]) == []
    # The driver replaces its a100 with an h100 under the same slice and device name:
    # the pools and the selector's remembered "no" for gpu-0 must both be dropped.
    _upsert_slice(w, gpu_slice("n2", gpu("gpu-0", "h100")))
    assert fits(w.filter_all(_pod("p2", "c2"))[2]) == ["n2"]


def test_a_new_slice_for_another_node_is_seen_by_the_next_pod() -> None:
    w = _h100_world()
    assert fits(w.filter_all(_pod("p1", "c1"))[2]) == []
    _upsert_slice(w, gpu_slice("n1", gpu("gpu-0", "h100")))
    assert fits(w.filter_all(_pod("p2", "c2"))[2]) == ["n1"]


def test_the_index_is_kept_while_slices_and_rules_are_the_same_objects() -> None:
    cache = SliceIndexCache()
    slices = [decode_resource_slice(gpu_slice("n1", gpu("gpu-0")))]
    builds: list[int] = []

    def build() -> list[Any]:
        builds.append(1)
        return slices

    first = cache.index(slices, [], build)
    # A new list of the same objects (each Store.list() is one) keeps the index.
    assert cache.index(list(slices), [], build) is first
    assert len(builds) == 1
    # The same slice decoded again is a new object: an informer update.
    again = [decode_resource_slice(gpu_slice("n1", gpu("gpu-0")))]
    assert cache.index(again, [], build) is not first
    assert len(builds) == 2
    rule = decode_device_taint_rule(
        {
            "metadata": {"name": "r"},
            "spec": {
                "deviceSelector": {"driver": GPU},
                "taint": {"key": "k", "effect": "NoSchedule"},
            },
        }
    )
    assert cache.index(again, [rule], build) is not cache.index(again, [], build)
    assert len(builds) == 4


def test_a_node_with_new_labels_gathers_its_pools_again() -> None:
    raw = dra.resource_slice("net", "", [dra.device("vlan-0")], pool="fabric")
    del raw["spec"]["nodeName"]
    raw["spec"]["nodeSelector"] = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
        ]
    }
    index = SliceIndex([decode_resource_slice(raw)])
    assert [p.name for p in index.pools("n1", {"zone": "a"})] == ["fabric"]
    assert index.pools("n1", {"zone": "b"}) == []
    assert [p.name for p in index.pools("n1", {"zone": "a"})] == ["fabric"]
