"""InformerFactory: the scheduler's informers, their selectors, and running them together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from asched.api import decode_node
from asched.framework.clock import FakeClock
from asched.framework.events import EventResource
from asched.framework.listers import InformerRequest
from asched.informers import InformerFactory
from asched.informers.factory import NON_TERMINAL_PODS
from tests.builders import make_node, make_pod
from tests.unit.informers.fake_api import FakeApi, Router


@dataclass
class Names:
    added: list[str] = field(default_factory=list)

    def on_add(self, obj: Any) -> None:
        self.added.append(obj.name)

    def on_update(self, old: Any, new: Any) -> None:
        pass

    def on_delete(self, obj: Any) -> None:
        pass


def podgroups(optional: bool) -> InformerRequest[Any]:
    return InformerRequest(
        resource="podgroups.scheduling.x-k8s.io/v1alpha1",
        list_path="/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
        decode=lambda raw: raw["metadata"]["name"],
        event_resource=EventResource.POD_GROUP,
        optional=optional,
    )


async def test_runs_nodes_pods_and_a_missing_optional_crd_to_sync() -> None:
    nodes, pods = FakeApi("/api/v1/nodes"), FakeApi("/api/v1/pods")
    nodes.put(make_node("n1").raw())
    pods.put(make_pod("p1").raw())
    factory = InformerFactory(Router(nodes, pods), clock=FakeClock())
    node_names, pod_names = Names(), Names()
    factory.nodes(node_names)
    factory.pods(pod_names)
    crd = factory.for_request(podgroups(optional=True), Names())

    async with anyio.create_task_group() as tg:
        tg.start_soon(factory.run)
        with anyio.fail_after(5):
            await factory.wait_synced()
        tg.cancel_scope.cancel()

    assert factory.has_synced()
    assert (node_names.added, pod_names.added) == (["n1"], ["p1"])
    assert crd.has_synced()
    assert len(crd.store) == 0
    assert pods.list_calls[0]["fieldSelector"] == NON_TERMINAL_PODS
    assert "fieldSelector" not in nodes.list_calls[0]
    assert set(factory.informers) == {"nodes", "pods", "podgroups.scheduling.x-k8s.io/v1alpha1"}


def test_one_informer_per_resource() -> None:
    factory = InformerFactory(Router(), clock=FakeClock())
    factory.nodes(Names())

    with pytest.raises(ValueError, match="nodes"):
        factory.informer("nodes", "/api/v1/nodes", decode_node, Names())
