from __future__ import annotations

from typing import Any

import pytest

from asched.api import decode_node
from asched.client.protocol import ApiError
from asched.explain.view import build_snapshot, fill_store, list_decoded, load_view
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest
from asched.informers import Store
from tests.builders import make_node, make_pod
from tests.unit.explain.fakes import FakeKube

BAD_NODE: dict[str, Any] = {"metadata": {"name": "bad"}, "status": {"allocatable": {"cpu": "lots"}}}


async def test_load_view_decodes_nodes_and_pods_and_names_what_it_skips() -> None:
    kube = FakeKube()
    kube.add("/api/v1/nodes", make_node("n1").raw(), BAD_NODE)
    kube.add("/api/v1/pods", make_pod("p", "ns").raw())
    view = await load_view(kube)
    assert [n.name for n in view.nodes] == ["n1"]
    assert [p.key for p in view.pods] == ["ns/p"]
    assert len(view.skipped) == 1
    assert view.skipped[0].startswith("Node bad: ")
    assert kube.writes == []


@pytest.mark.parametrize(
    ("optional", "raises"),
    [(True, False), (False, True)],
    ids=["optional-missing-is-empty", "required-missing-raises"],
)
async def test_a_missing_resource(optional: bool, raises: bool) -> None:
    kube = FakeKube()
    kube.missing.add("/apis/x/v1/things")
    if raises:
        with pytest.raises(ApiError):
            await list_decoded(kube, "/apis/x/v1/things", dict, optional=optional)
    else:
        assert await list_decoded(kube, "/apis/x/v1/things", dict, optional=optional) == ([], [])


async def test_fill_store_keys_objects_like_an_informer_and_marks_it_synced() -> None:
    kube = FakeKube()
    kube.add("/api/v1/nodes", make_node("n1").raw(), BAD_NODE)
    req: InformerRequest[Any] = InformerRequest(
        "nodes", "/api/v1/nodes", decode_node, EventResource.NODE
    )
    store: Store[Any] = Store()
    skipped = await fill_store(kube, req, store)
    assert store.list_keys() == ["n1"]
    assert store.has_synced()
    assert len(skipped) == 1
    assert skipped[0].startswith("nodes bad: ")


def test_build_snapshot_counts_assigned_pods_except_the_explained_one() -> None:
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    mine = make_pod("mine").cpu("1").node("n1").obj()
    other = make_pod("other").cpu("2").node("n1").obj()
    pending = make_pod("pending").cpu("3").obj()
    snap = build_snapshot(nodes, [mine, other, pending], exclude_uid=mine.uid)
    n1 = snap.get("n1")
    assert n1 is not None
    assert [p.name for p in n1.pods] == ["other"]
    assert n1.requested.milli_cpu == 2000
    assert [ni.name for ni in snap.node_infos()] == ["n1", "n2"]
