from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from asched.backend.snapshot import Snapshot
from asched.explain.services import ExplainServices, ReadOnlyClient, ReadOnlyError
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest
from tests.builders import make_pod
from tests.unit.explain.fakes import FakeKube

Call = Callable[[ReadOnlyClient], Awaitable[Any]]
WRITES: list[tuple[str, Call]] = [
    ("post", lambda c: c.request("POST", "/api/v1/namespaces/x/events", body={})),
    ("patch", lambda c: c.request("PATCH", "/api/v1/namespaces/x/pods/p/status", body={})),
    ("put", lambda c: c.request("PUT", "/api/v1/nodes/n", body={})),
    ("delete", lambda c: c.request("DELETE", "/api/v1/namespaces/x/pods/p")),
    ("bind", lambda c: c.bind("x", "p", "uid", "n1")),
]


@pytest.mark.parametrize("call", [w[1] for w in WRITES], ids=[w[0] for w in WRITES])
async def test_read_only_client_refuses_writes(call: Call) -> None:
    kube = FakeKube()
    with pytest.raises(ReadOnlyError, match="dry run"):
        await call(ReadOnlyClient(kube))
    assert kube.requests == []


async def test_read_only_client_passes_reads() -> None:
    kube = FakeKube()
    kube.objects["/api/v1/nodes/n1"] = {"kind": "Node"}
    assert await ReadOnlyClient(kube).request("get", "/api/v1/nodes/n1") == {"kind": "Node"}
    assert kube.requests == [("GET", "/api/v1/nodes/n1")]


def test_services_index_pods_and_hold_events() -> None:
    pods = [
        make_pod("a", "ns1").obj(),
        make_pod("b", "ns1").nominated("n1").obj(),
        make_pod("c", "ns2").node("n2").nominated("n1").obj(),  # bound: not nominated
    ]
    s = ExplainServices(FakeKube(), Snapshot(), pods)
    assert [p.name for p in s.pods_in_namespace("ns1")] == ["a", "b"]
    assert s.pods_in_namespace("none") == []
    assert [p.name for p in s.nominated_pods_for_node("n1")] == ["b"]
    assert s.has_nominated_pods()
    s.events.event(pods[0], "Warning", "Unschedulable", "Scheduling", "no")
    assert [(e.regarding, e.reason, e.message) for e in s.held.events] == [
        ("ns1/a", "Unschedulable", "no")
    ]
    assert isinstance(s.client, ReadOnlyClient)


def test_store_is_one_per_resource_and_remembers_the_request() -> None:
    s = ExplainServices(FakeKube(), Snapshot(), [])
    req: InformerRequest[Any] = InformerRequest(
        "things/v1", "/apis/x/v1/things", dict, EventResource.POD
    )
    first = s.store(req)
    assert s.store(req) is first
    assert s.requests == {"things/v1": req}
    assert not first.has_synced()
