"""InformerFactory: builds the informers the scheduler needs and runs them together.

The scheduler needs nodes, pods, and whatever plugins ask for through InformerRequest.
The factory owns their common settings (client, clock) and a task group that runs them,
and refuses a second informer for the same resource, because two caches of one resource
would disagree with each other.

The pod informer follows kube-scheduler's (pkg/scheduler/scheduler.go newPodInformer):
all pods except those that finished (Succeeded/Failed), which hold no resources. When a
pod finishes, the field selector makes the API server send a DELETED event for it. The
handler splits assigned from unassigned pods.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio

from asched.api import Node, Pod, decode_node, decode_pod
from asched.client.protocol import KubeClient
from asched.framework.clock import Clock, RealClock
from asched.framework.listers import InformerRequest
from asched.informers.handler import EventHandler
from asched.informers.informer import Informer

T = TypeVar("T")

NODES = "nodes"
PODS = "pods"
NODES_PATH = "/api/v1/nodes"
PODS_PATH = "/api/v1/pods"
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"


class InformerFactory:
    def __init__(
        self,
        client: KubeClient,
        *,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._clock = clock or RealClock()
        self._rng = rng or random.Random()
        self._informers: dict[str, Informer[Any]] = {}

    @property
    def informers(self) -> Mapping[str, Informer[Any]]:
        return self._informers

    def nodes(self, handler: EventHandler[Node]) -> Informer[Node]:
        return self.informer(NODES, NODES_PATH, decode_node, handler)

    def pods(self, handler: EventHandler[Pod]) -> Informer[Pod]:
        return self.informer(
            PODS, PODS_PATH, decode_pod, handler, params={"fieldSelector": NON_TERMINAL_PODS}
        )

    def for_request(self, request: InformerRequest[T], handler: EventHandler[T]) -> Informer[T]:
        return self.informer(
            request.resource,
            request.list_path,
            request.decode,
            handler,
            optional=request.optional,
        )

    def informer(
        self,
        resource: str,
        list_path: str,
        decode: Callable[[dict[str, Any]], T],
        handler: EventHandler[T],
        *,
        params: Mapping[str, str] | None = None,
        optional: bool = False,
    ) -> Informer[T]:
        """A new informer for *resource*; ValueError if the factory already has one."""
        if resource in self._informers:
            raise ValueError(f"an informer for {resource!r} already exists")
        informer: Informer[T] = Informer(
            self._client,
            list_path,
            decode,
            handler,
            params=params,
            clock=self._clock,
            name=resource,
            optional=optional,
            rng=random.Random(self._rng.random()),
        )
        self._informers[resource] = informer
        return informer

    async def run(self) -> None:
        """Run every informer built so far until cancelled."""
        async with anyio.create_task_group() as tg:
            for informer in self._informers.values():
                tg.start_soon(informer.run, name=f"informer:{informer.name}")

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def wait_synced(self) -> None:
        for informer in self._informers.values():
            await informer.wait_synced()
