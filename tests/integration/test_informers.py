"""Informers against a real kube-apiserver: live events, recovery from 410, pagination.

The informer talks to the API server through asched's own ClusterClient, built from the
cluster's kubeconfig files. A thin interposer between them shortens watches and can hold
the informer "disconnected". The 410 test runs on a second control plane whose API server
has no watch cache (`--watch-cache=false`), so watches are served by etcd: after a
compaction, resuming from the informer's last resourceVersion gets the real 410 that a
long disconnection gets in production. (With the watch cache on, the server keeps serving
old versions from memory, so no 410 can be forced quickly.)
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import anyio
import pytest
from anyio.from_thread import start_blocking_portal

from asched.api import Pod, decode_pod
from asched.client.pager import DEFAULT_PAGE_SIZE
from asched.client.rest import RestClient as KubeRest
from asched.informers import Informer
from asched.localcluster import ClusterClient as Harness
from asched.localcluster import LocalCluster
from tests.builders import make_pod
from tests.integration.helpers import pod_path

# Watches end this often, so the interposer gets a turn between them.
WATCH_SECONDS = "2"


class Interposer:
    """A KubeClient wrapper: short watches, and holding the next watch back."""

    def __init__(self, inner: KubeRest) -> None:
        self.inner = inner
        self.list_calls: list[dict[str, str]] = []
        self.watch_starts: list[str] = []
        self.gone_events = 0
        self._held: anyio.Event | None = None
        self.waiting = anyio.Event()

    def hold(self) -> None:
        """The next watch waits until release(): the informer is disconnected meanwhile."""
        self._held = anyio.Event()
        self.waiting = anyio.Event()

    def release(self) -> None:
        assert self._held is not None
        self._held.set()

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        if method == "GET":
            self.list_calls.append(dict(kwargs.get("params") or {}))
        return await self.inner.request(method, path, **kwargs)

    async def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        query = {**(params or {}), "timeoutSeconds": WATCH_SECONDS}
        held = self._held
        if held is not None:
            self.waiting.set()
            await held.wait()
            self._held = None
        self.watch_starts.append(query["resourceVersion"])
        # Closed with this generator: the informer acloses its stream, and an inner stream
        # left to the garbage collector would leave its connection open (a ResourceWarning
        # that a later test's collection reports).
        async with aclosing(self.inner.stream_lines(path, query)) as lines:
            async for line in lines:
                if line.startswith(b'{"type":"ERROR"') and b'"code":410' in line:
                    self.gone_events += 1
                yield line

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        await self.inner.bind(namespace, name, uid, node)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Seen:
    """Events by kind and name, and the view they build, checked at every step."""

    events: list[tuple[str, str]] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def _note(self, kind: str, name: str) -> None:
        self.events.append((kind, name))
        self.changed.set()
        self.changed = anyio.Event()

    def on_add(self, obj: Any) -> None:
        assert obj.name not in self.view, f"second add of {obj.name}"
        self.view[obj.name] = obj
        self._note("add", obj.name)

    def on_update(self, old: Any, new: Any) -> None:
        assert self.view.get(new.name) is old
        self.view[new.name] = new
        self._note("update", new.name)

    def on_delete(self, obj: Any) -> None:
        assert self.view.pop(obj.name, None) is not None, f"delete of unknown {obj.name}"
        self._note("delete", obj.name)

    def count(self, kind: str, name: str) -> int:
        return self.events.count((kind, name))

    async def until(self, check: Callable[[], bool], seconds: float = 20.0) -> None:
        with anyio.fail_after(seconds):
            while not check():
                await self.changed.wait()


@asynccontextmanager
async def informing(
    client: Interposer,
    path: str,
    decode: Callable[[dict[str, Any]], Any],
    seen: Seen,
    **kwargs: Any,
) -> AsyncIterator[Informer[Any]]:
    informer: Informer[Any] = Informer(client, path, decode, seen, **kwargs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(informer.run)
        with anyio.fail_after(30):
            await informer.wait_synced()
        yield informer
        tg.cancel_scope.cancel()


@asynccontextmanager
async def kube(cluster: LocalCluster, *, admin: bool = False) -> AsyncIterator[Interposer]:
    kubeconfig = cluster.admin_kubeconfig if admin else cluster.scheduler_kubeconfig
    async with await KubeRest.from_kubeconfig(kubeconfig, qps=-1, burst=0) as rest:
        yield Interposer(rest)


async def compact_etcd(cluster: LocalCluster) -> None:
    """Do now what etcd compaction does every few minutes: forget all past revisions."""
    etcd = cluster.layout.etcd_url
    async with aiohttp.ClientSession() as http:
        key = base64.b64encode(b"/").decode()
        async with http.post(f"{etcd}/v3/kv/range", json={"key": key}) as resp:
            revision = (await resp.json())["header"]["revision"]
        async with http.post(
            f"{etcd}/v3/kv/compaction", json={"revision": revision, "physical": True}
        ) as resp:
            assert resp.status == 200, await resp.text()


def new_pod(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    raw = make_pod(name, namespace).scheduler("nobody").labels(labels).raw()
    raw["metadata"].pop("uid", None)
    raw["metadata"].pop("creationTimestamp", None)
    return raw


async def test_informer_sees_pod_adds_updates_and_deletes(
    cluster: LocalCluster, admin: Harness, namespace: str
) -> None:
    await admin.post(pod_path(namespace), new_pod("before", namespace))
    seen = Seen()
    async with (
        kube(cluster) as client,
        informing(client, pod_path(namespace), decode_pod, seen) as informer,
    ):
        assert seen.events == [("add", "before")]

        await admin.post(pod_path(namespace), new_pod("live", namespace))
        await seen.until(lambda: seen.count("add", "live") == 1)

        await admin.patch(pod_path(namespace, "live"), {"metadata": {"labels": {"v": "2"}}})
        await seen.until(lambda: seen.count("update", "live") == 1)
        updated: Pod = seen.view["live"]
        assert updated.labels == {"v": "2"}
        assert informer.store.get(f"{namespace}/live") is updated

        await admin.delete(pod_path(namespace, "live"), params={"gracePeriodSeconds": 0})
        await seen.until(lambda: seen.count("delete", "live") == 1)
        assert informer.store.get(f"{namespace}/live") is None
        assert set(seen.view) == {"before"}


@pytest.fixture(scope="module")
def uncached_cluster() -> Iterator[LocalCluster]:
    """A control plane whose API server serves watches from etcd (see the module doc)."""
    no_watch_cache = LocalCluster(extra_args={"kube-apiserver": ["--watch-cache=false"]})
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(no_watch_cache) as local,
    ):
        yield local


async def test_expired_resource_version_relists_without_losing_events(
    uncached_cluster: LocalCluster,
) -> None:
    cluster, namespace = uncached_cluster, "relist"
    async with cluster.admin_client() as admin:
        await admin.post("/api/v1/namespaces", {"metadata": {"name": namespace}})
        for name in ("keep", "change", "remove"):
            await admin.post(pod_path(namespace), new_pod(name, namespace))
        seen = Seen()
        async with (
            kube(cluster) as client,
            informing(client, pod_path(namespace), decode_pod, seen),
        ):
            client.hold()
            with anyio.fail_after(10):  # the current watch ends within WATCH_SECONDS
                await client.waiting.wait()
            # Disconnected: changes the informer can only learn from a relist.
            created = [f"new-{i}" for i in range(5)]
            for name in created:
                await admin.post(pod_path(namespace), new_pod(name, namespace))
            await admin.patch(pod_path(namespace, "change"), {"metadata": {"labels": {"v": "2"}}})
            await admin.delete(pod_path(namespace, "remove"), params={"gracePeriodSeconds": 0})
            lists_before = len(client.list_calls)
            await compact_etcd(cluster)

            # The informer resumes from its last resourceVersion, which etcd no longer has.
            client.release()
            expected = {"keep", "change", *created}
            await seen.until(
                lambda: set(seen.view) == expected and "v" in seen.view["change"].labels
            )

            assert client.gone_events == 1
            assert len(client.list_calls) == lists_before + 1
            assert all(seen.count("add", name) == 1 for name in created)
            assert seen.count("delete", "remove") == 1
            assert seen.count("update", "change") == 1
            assert seen.count("update", "keep") == 0, "an unchanged pod is not re-announced"
            server = {
                p["metadata"]["name"]: p["metadata"]["resourceVersion"]
                for p in await admin.list(pod_path(namespace))
            }
            assert {n: p.resource_version for n, p in seen.view.items()} == server


@dataclass(frozen=True, slots=True)
class ConfigMap:
    name: str
    resource_version: str


def decode_config_map(raw: dict[str, Any]) -> ConfigMap:
    meta = raw["metadata"]
    return ConfigMap(meta["name"], meta["resourceVersion"])


async def test_pagination_over_600_objects(
    cluster: LocalCluster, admin: Harness, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    names = [f"cm-{i:03d}" for i in range(600)]
    limiter = anyio.Semaphore(32)

    async def create(name: str) -> None:
        async with limiter:
            await admin.post(
                path, {"metadata": {"name": name, "labels": {"batch": "x"}}, "data": {"k": name}}
            )

    async with anyio.create_task_group() as tg:
        for name in names:
            tg.start_soon(create, name)

    seen = Seen()
    async with (
        kube(cluster, admin=True) as client,
        informing(client, path, decode_config_map, seen, params={"labelSelector": "batch=x"}),
    ):
        assert sorted(seen.view) == names
        assert len(seen.events) == 600
        pages = client.list_calls
        size = str(DEFAULT_PAGE_SIZE)
        assert [("continue" in p, p["limit"], p["labelSelector"]) for p in pages] == [
            (False, size, "batch=x")
        ] + [(True, size, "batch=x")] * (-(-600 // DEFAULT_PAGE_SIZE) - 1)
        # Watching from the list's version: a new object arrives once, nothing is replayed.
        await admin.post(path, {"metadata": {"name": "cm-late", "labels": {"batch": "x"}}})
        await seen.until(lambda: "cm-late" in seen.view)
        assert len(seen.events) == 601
