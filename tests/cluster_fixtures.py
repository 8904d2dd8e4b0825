"""Fixtures that give tests a real control plane (loaded for every test directory by the
root conftest.py, so one session starts one cluster however many directories use it).

One LocalCluster serves the whole session: it runs in a blocking portal (an event loop in
a thread of its own), so its processes outlive each test's event loop, while tests talk to
it over HTTP from their own loops. Missing binaries fail the session with the build
command; only ASCHED_SKIP_INTEGRATION=1 skips these tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import os
import tracemalloc
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Protocol

import anyio
import anyio.to_thread
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from asched.localcluster import ApiError, ClusterClient, LocalCluster, NodeSpec, delete_nodes

SKIP_ENV = "ASCHED_SKIP_INTEGRATION"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the control plane is an integration test, wherever it lives."""
    skip = os.environ.get(SKIP_ENV) == "1"
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
            if skip:
                item.add_marker(pytest.mark.skip(reason=f"{SKIP_ENV}=1"))


def unclosed_transports() -> list[str]:
    """asyncio transports whose socket is still open while their event loop is closed:
    nothing can close them any more, so each is a socket leaked by whoever opened it
    (a client not closed, a close that the loop ended before it could finish). With
    tracemalloc on (`python -X tracemalloc=25`), each says where it was allocated."""
    found = []
    for obj in gc.get_objects():
        if not isinstance(obj, asyncio.Transport):
            continue
        # Private, both: the socket of the transports that own one (the selector loop's;
        # a TLS transport wraps one of those), dropped once closed, and the loop, which
        # a transport that finished closing has no more.
        sock = getattr(obj, "_sock", None)
        loop = getattr(obj, "_loop", None)
        if sock is None or sock.fileno() == -1 or loop is None or not loop.is_closed():
            continue
        where = tracemalloc.get_object_traceback(obj)
        found.append(f"{obj!r}" + (f", allocated at:\n{where}" if where is not None else ""))
    return found


@pytest.fixture(autouse=True)
def no_leaked_sockets(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that talks to the control plane must leave no socket open behind its event
    loop. Torn down after the test's loop closed (autouse fixtures are set up first), so
    a leak fails the test that made it, not whichever later test the collector happens to
    run in (issue 34: once in CI, an API-server socket collected unclosed during
    test_informers, after the fault tests)."""
    yield
    if "cluster" not in request.fixturenames:
        return
    leaked = unclosed_transports()
    assert not leaked, "sockets left open behind a closed event loop:\n" + "\n".join(leaked)


@pytest.fixture(scope="session")
def control_plane() -> Iterator[tuple[BlockingPortal, LocalCluster]]:
    """The session's cluster and the portal (event loop) that owns its processes."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(LocalCluster()) as local,
    ):
        yield portal, local


@pytest.fixture(scope="session")
def cluster(control_plane: tuple[BlockingPortal, LocalCluster]) -> LocalCluster:
    """The session's control plane (etcd, kube-apiserver, kube-controller-manager, kwok)."""
    return control_plane[1]


class RestartApiServer(Protocol):
    async def __call__(
        self, down_for: float = 0.0, *, extra_args: Sequence[str] = (), compact: bool = False
    ) -> None: ...


@pytest.fixture
def restart_apiserver(control_plane: tuple[BlockingPortal, LocalCluster]) -> RestartApiServer:
    """`await restart_apiserver(down_for)`: SIGKILL the session's kube-apiserver and start
    it again on the same port (LocalCluster.restart_apiserver, run on the cluster's loop).
    *extra_args* are added for that start only; *compact* compacts etcd while it is down."""
    portal, local = control_plane

    async def restart(
        down_for: float = 0.0, *, extra_args: Sequence[str] = (), compact: bool = False
    ) -> None:
        call = functools.partial(
            local.restart_apiserver,
            down_for,
            extra_args=extra_args,
            before_start=local.compact_etcd if compact else None,
        )
        await anyio.to_thread.run_sync(lambda: portal.call(call))

    return restart


@pytest.fixture
async def admin(cluster: LocalCluster) -> AsyncIterator[ClusterClient]:
    async with cluster.admin_client() as client:
        yield client


@pytest.fixture
async def scheduler_client(cluster: LocalCluster) -> AsyncIterator[ClusterClient]:
    """Authenticated as ``system:asched``: only the RBAC in manifests/rbac.yaml."""
    async with cluster.scheduler_client() as client:
        yield client


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def namespace(admin: ClusterClient) -> AsyncIterator[str]:
    """A fresh namespace; afterwards its pods are force-deleted, then the namespace."""
    name = unique("t")
    await admin.post("/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    # Pods on nodes that nothing manages would wait for a kubelet for ever: force them.
    await admin.delete(f"/api/v1/namespaces/{name}/pods", params={"gracePeriodSeconds": 0})
    await admin.delete(f"/api/v1/namespaces/{name}")


class NodeFactory:
    """Creates kwok nodes with test-unique names and deletes them after the test."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.created: list[str] = []
        self.prefix = unique("n")

    async def __call__(self, specs: list[NodeSpec], *, ready_within: float = 60.0) -> list[str]:
        renamed = [dataclasses.replace(s, name=f"{self.prefix}-{s.name}") for s in specs]
        names = await self.cluster.create_nodes(renamed)
        self.created += names
        with anyio.fail_after(ready_within):
            await self.cluster.wait_nodes_ready(names)
        return names


@pytest.fixture
async def kwok_nodes(cluster: LocalCluster, admin: ClusterClient) -> AsyncIterator[NodeFactory]:
    factory = NodeFactory(cluster)
    yield factory
    try:
        await delete_nodes(admin, factory.created)
    except ApiError as err:  # pragma: no cover - cleanup must not hide the test's outcome
        pytest.fail(f"deleting test nodes failed: {err}")
