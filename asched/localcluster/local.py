"""LocalCluster: etcd, kube-apiserver, kube-controller-manager and kwok on loopback.

asched is tested and benchmarked against a real API server. This module owns the whole
life of one such control plane: it lays out a private work directory, starts the components
in order, waits for each to be ready, installs asched's CRD and RBAC, and writes an admin
and a scheduler kubeconfig. Its guarantee is cleanup: every process it started and the
work directory are gone after stop(), and also after a start() that failed or was
cancelled half-way, because each step registers its undo on one exit stack as it goes.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiohttp
import anyio
import structlog

from asched.localcluster import components as comp
from asched.localcluster.apply import Applier, load_manifests, wait_crd_established
from asched.localcluster.auth import Identity, admin_identity, render_token_file, scheduler_identity
from asched.localcluster.binaries import Binaries, find_binaries
from asched.localcluster.errors import ClusterStartError
from asched.localcluster.kubeconfig import write_kubeconfig
from asched.localcluster.nodes import NodeSpec, create_nodes, wait_nodes_ready
from asched.localcluster.pki import generate_rsa_key
from asched.localcluster.ports import LOOPBACK, pick_free_ports
from asched.localcluster.process import DEFAULT_GRACE, ManagedProcess, spawn
from asched.localcluster.rest import ClusterClient

log = structlog.get_logger()

PODGROUP_CRD = "podgroups.scheduling.x-k8s.io"
_DATA = "asched.localcluster.data"


def bundled_manifest(name: str) -> str:
    """Text of a manifest shipped in the package (links to the repository's manifests/)."""
    return resources.files(_DATA).joinpath(name).read_text()


def _make_work_dir(work_dir: Path | None) -> Path:
    if work_dir is None:
        return Path(tempfile.mkdtemp(prefix="asched-cluster-"))
    work_dir.mkdir(parents=True, exist_ok=True)
    if any(work_dir.iterdir()):
        raise ClusterStartError(f"work directory {work_dir} is not empty")
    return work_dir.resolve()


def _prepare_dirs(layout: comp.Layout) -> None:
    for d in (layout.logs_dir, layout.cert_dir, layout.etcd_data_dir):
        d.mkdir(mode=0o700)


class LocalCluster:
    """One throw-away control plane. ``async with LocalCluster() as cluster: ...``

    *work_dir*: created if needed (must be empty) and removed on stop; a fresh temp dir if
    None. *unthrottled*: turn off kube-apiserver's inflight limits and API Priority and
    Fairness (benchmarks). *extra_args*: flags appended per component (``"etcd"``,
    ``"kube-apiserver"``, ``"kube-controller-manager"``, ``"kwok"``), e.g. for tests that
    need a component to fail. *start_timeout* bounds the whole start().
    """

    def __init__(
        self,
        *,
        work_dir: Path | None = None,
        bin_dir: Path | None = None,
        unthrottled: bool = True,
        extra_args: Mapping[str, Sequence[str]] | None = None,
        start_timeout: float = 90.0,
        stop_grace: float = DEFAULT_GRACE,
    ) -> None:
        self._requested_dir = work_dir
        self._bin_dir = bin_dir
        self.unthrottled = unthrottled
        self._extra_args = dict(extra_args or {})
        self._start_timeout = start_timeout
        self._stop_grace = stop_grace
        self._stack: AsyncExitStack | None = None
        self._layout: comp.Layout | None = None
        self._admin = admin_identity()
        self._scheduler = scheduler_identity()
        self._ca_pem: bytes | None = None
        self._processes: dict[str, ManagedProcess] = {}
        self._argv: Mapping[str, Sequence[str]] = {}
        self._started = False

    # -- what callers use -------------------------------------------------------------

    @property
    def layout(self) -> comp.Layout:
        if self._layout is None:
            raise RuntimeError("LocalCluster is not started")
        return self._layout

    @property
    def work_dir(self) -> Path:
        return self.layout.work_dir

    @property
    def server(self) -> str:
        """``https://127.0.0.1:<port>``"""
        return self.layout.server

    @property
    def admin(self) -> Identity:
        return self._admin

    @property
    def scheduler(self) -> Identity:
        """The identity asched runs as: user ``system:asched``, only asched's RBAC."""
        return self._scheduler

    @property
    def ca_pem(self) -> bytes | None:
        """kube-apiserver's self-signed serving certificate chain (PEM)."""
        return self._ca_pem

    @property
    def admin_kubeconfig(self) -> Path:
        return self.layout.admin_kubeconfig

    @property
    def scheduler_kubeconfig(self) -> Path:
        return self.layout.scheduler_kubeconfig

    @property
    def pids(self) -> dict[str, int]:
        """Process id of every component started (kept after stop, for post-mortems)."""
        return {name: p.pid for name, p in self._processes.items()}

    def admin_client(self, **kwargs: Any) -> ClusterClient:
        """A ClusterClient (enter it with ``async with``) authenticated as the admin."""
        return ClusterClient(self.server, self._admin.token, ca_pem=self._ca_pem, **kwargs)

    def scheduler_client(self, **kwargs: Any) -> ClusterClient:
        """A ClusterClient authenticated as ``system:asched``."""
        return ClusterClient(self.server, self._scheduler.token, ca_pem=self._ca_pem, **kwargs)

    async def create_nodes(self, specs: Sequence[NodeSpec], *, concurrency: int = 32) -> list[str]:
        """Create kwok nodes (at most *concurrency* requests in flight); return their names."""
        async with self.admin_client(connections=concurrency) as client:
            return await create_nodes(client, specs, concurrency=concurrency)

    async def wait_nodes_ready(self, names: Sequence[str]) -> None:
        """Wait (unbounded; wrap in ``anyio.fail_after``) until kwok marks all Ready."""
        async with self.admin_client() as client:
            await wait_nodes_ready(client, names)

    async def add_nodes(self, specs: Sequence[NodeSpec], *, concurrency: int = 32) -> list[str]:
        """create_nodes, then wait_nodes_ready."""
        names = await self.create_nodes(specs, concurrency=concurrency)
        await self.wait_nodes_ready(names)
        return names

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Start everything and wait until the cluster is usable; undo all of it on failure."""
        if self._started:
            raise RuntimeError("a LocalCluster starts once; make a new one")
        self._started = True
        bins = find_binaries(self._bin_dir)
        self._stack = AsyncExitStack()
        began = time.monotonic()
        try:
            with anyio.fail_after(self._start_timeout):
                await self._start(bins)
        except TimeoutError:
            detail = await self._failure_detail()
            await self.stop()
            raise ClusterStartError(
                f"control plane not ready within {self._start_timeout}s{detail}"
            ) from None
        except BaseException:
            await self.stop()
            raise
        log.info("cluster_ready", server=self.server, seconds=round(time.monotonic() - began, 2))

    async def stop(self) -> None:
        """Stop the components in reverse order and remove the work dir. Idempotent."""
        stack, self._stack = self._stack, None
        if stack is None:
            return
        with anyio.CancelScope(shield=True):
            await stack.aclose()
        log.info("cluster_stopped")

    async def _start(self, bins: Binaries) -> None:
        assert self._stack is not None
        work_dir = await anyio.to_thread.run_sync(_make_work_dir, self._requested_dir)
        self._stack.push_async_callback(self._remove_work_dir, work_dir)
        ports = pick_free_ports(5)
        layout = comp.Layout(work_dir, *ports)
        self._layout = layout
        await anyio.to_thread.run_sync(_prepare_dirs, layout)
        log.info("cluster_starting", work_dir=str(work_dir), server=layout.server)

        await anyio.Path(layout.token_file).write_text(
            render_token_file([self._admin, self._scheduler])
        )
        await anyio.Path(layout.token_file).chmod(0o600)
        await generate_rsa_key(layout.service_account_key)
        argv = comp.command_lines(
            bins, layout, unthrottled=self.unthrottled, extra_args=self._extra_args
        )
        self._argv = argv

        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=False),
            timeout=aiohttp.ClientTimeout(total=5),
        ) as http:
            await self._run(comp.ETCD, argv)
            await self._wait(comp.ETCD, lambda: _probe(http, f"{layout.etcd_url}/health"))

            await self._run(comp.APISERVER, argv)
            admin = {"Authorization": f"Bearer {self._admin.token}"}
            await self._wait(comp.APISERVER, lambda: _probe(http, f"{layout.server}/readyz", admin))
            self._ca_pem = await anyio.Path(layout.serving_cert).read_bytes()
            await write_kubeconfig(
                layout.admin_kubeconfig,
                layout.server,
                self._admin.user,
                self._admin.token,
                ca_pem=self._ca_pem,
            )
            await write_kubeconfig(
                layout.scheduler_kubeconfig,
                layout.server,
                self._scheduler.user,
                self._scheduler.token,
                ca_pem=self._ca_pem,
            )
            await self._install_manifests()

            await self._run(comp.CONTROLLER_MANAGER, argv)
            await self._run(comp.KWOK, argv)
            kcm = f"https://{LOOPBACK}:{layout.controller_manager_port}/healthz"
            await self._wait(comp.CONTROLLER_MANAGER, lambda: _probe(http, kcm))
            kwok = f"http://{LOOPBACK}:{layout.kwok_port}/healthz"
            await self._wait(comp.KWOK, lambda: _probe(http, kwok))

        await self._wait_scheduler_authorized()

    async def restart_apiserver(
        self,
        down_for: float = 0.0,
        *,
        ready_within: float = 60.0,
        extra_args: Sequence[str] = (),
        before_start: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """SIGKILL kube-apiserver, wait `down_for` seconds, start it again on the same port
        with the same certificates and etcd, and return once it answers /readyz: a crash
        and a restart by its supervisor, for fault tests. *extra_args* are appended to its
        flags for this start only (a later flag wins, e.g. ``--watch-cache=false``);
        *before_start* runs while it is down (e.g. `compact_etcd`). Call it on the loop
        that started the cluster (the processes belong to it)."""
        await self._processes[comp.APISERVER].kill()
        log.info("apiserver_killed", server=self.server)
        await anyio.sleep(down_for)
        if before_start is not None:
            await before_start()
        began = time.monotonic()
        argv = dict(self._argv)
        argv[comp.APISERVER] = [*self._argv[comp.APISERVER], *extra_args]
        await self._run(comp.APISERVER, argv)
        admin = {"Authorization": f"Bearer {self._admin.token}"}
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=False),
            timeout=aiohttp.ClientTimeout(total=5),
        ) as http:
            with anyio.fail_after(ready_within):
                await self._wait(
                    comp.APISERVER, lambda: _probe(http, f"{self.server}/readyz", admin)
                )
        log.info("apiserver_restarted", seconds=round(time.monotonic() - began, 2))

    async def pause_etcd(self, seconds: float) -> None:
        """SIGSTOP etcd for *seconds*, then SIGCONT it (also when cancelled): a stalled
        disk or a stopped VM, for fault tests. kube-apiserver keeps running and its
        requests hang or time out meanwhile."""
        pid = self._processes[comp.ETCD].pid
        os.kill(pid, signal.SIGSTOP)
        log.info("etcd_paused", pid=pid, seconds=seconds)
        try:
            await anyio.sleep(seconds)
        finally:
            os.kill(pid, signal.SIGCONT)
            log.info("etcd_resumed", pid=pid)

    async def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (its JSON gateway's
        KV.Range and KV.Compact) and return that revision: a watch that resumes from an
        older resourceVersion, with kube-apiserver's watch cache off, is then answered
        410 Gone and must relist."""
        base = self.layout.etcd_url
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            # Any key: the answer's header carries the store's current revision.
            async with http.post(f"{base}/v3/kv/range", json={"key": "AA=="}) as resp:
                resp.raise_for_status()
                revision = int((await resp.json())["header"]["revision"])
            body = {"revision": revision, "physical": True}
            async with http.post(f"{base}/v3/kv/compaction", json=body) as resp:
                resp.raise_for_status()
        log.info("etcd_compacted", revision=revision)
        return revision

    async def _run(self, name: str, argv: Mapping[str, Sequence[str]]) -> None:
        assert self._stack is not None
        proc = await spawn(name, argv[name], self.layout.log_path(name))
        self._processes[name] = proc
        self._stack.push_async_callback(proc.stop, self._stop_grace)

    async def _wait(self, name: str, probe: Callable[[], Awaitable[bool]]) -> None:
        """Poll *probe* until true; fail as soon as any started component has exited."""
        began = time.monotonic()
        delay = 0.02
        while True:
            await self._check_alive()
            if await probe():
                log.debug("component_ready", component=name, seconds=time.monotonic() - began)
                return
            await anyio.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    async def _check_alive(self) -> None:
        for name, proc in self._processes.items():
            if not proc.running():
                tail = await proc.log_tail()
                raise ClusterStartError(
                    f"{name} exited with code {proc.returncode} during start; "
                    f"last lines of its log:\n{tail}"
                )

    async def _failure_detail(self) -> str:
        parts = []
        for name, proc in self._processes.items():
            state = "running" if proc.running() else f"exited {proc.returncode}"
            parts.append(f"\n--- {name} ({state}):\n{await proc.log_tail(10)}")
        return "".join(parts)

    async def _install_manifests(self) -> None:
        async with self.admin_client() as client:
            applier = Applier(client)
            await applier.apply_all(load_manifests(bundled_manifest(f"{PODGROUP_CRD}.yaml")))
            await wait_crd_established(client, PODGROUP_CRD)
            await applier.apply_all(load_manifests(bundled_manifest("rbac.yaml")))

    async def _wait_scheduler_authorized(self) -> None:
        """RBAC and a new CRD take effect asynchronously; wait until both serve asched."""
        paths = (
            "/api/v1/nodes?limit=1",
            "/apis/scheduling.x-k8s.io/v1alpha1/podgroups?limit=1",
            "/api/v1/namespaces/default",
        )
        async with self.scheduler_client() as client:
            for path in paths:

                async def ok(path: str = path) -> bool:
                    status, _ = await client.request_raw("GET", path)
                    return status == 200

                await self._wait("rbac", ok)

    async def _remove_work_dir(self, path: Path) -> None:
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(path, ignore_errors=True))


async def _probe(
    http: aiohttp.ClientSession, url: str, headers: Mapping[str, str] | None = None
) -> bool:
    try:
        async with http.get(url, headers=headers) as resp:
            await resp.read()
            return resp.status == 200
    except (aiohttp.ClientError, OSError, TimeoutError):
        return False
