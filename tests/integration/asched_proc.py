"""Runs `asched run` as a real process (its own identity and RBAC) for end-to-end tests.

By default it serves its ops port with `--insecure-serving` (plain HTTP on loopback), so
tests read /metrics without a token; `secure=True` serves HTTPS with delegated authn/authz,
as in production, and `ssl` is then what clients verify the serving certificate with.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl as ssllib
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import anyio
import anyio.to_thread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class AschedProcess:
    def __init__(
        self,
        config: Path | None,
        kubeconfig: Path,
        log_path: Path,
        extra: list[str] | None = None,
        *,
        secure: bool = False,
        ssl: ssllib.SSLContext | None = None,
    ) -> None:
        self.secure = secure
        # Without a context of the caller's, the self-signed certificate is not verified.
        self.ssl: ssllib.SSLContext | bool = (ssl or _unverified()) if secure else False
        self.config = config
        self.kubeconfig = kubeconfig
        self.log_path = log_path
        self.extra = extra or []
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.secure else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> None:
        argv = [
            sys.executable,
            "-m",
            "asched",
            "run",
            "--kubeconfig",
            str(self.kubeconfig),
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            str(self.port),
            "--log-level",
            "info",
            *([] if self.secure else ["--insecure-serving"]),
            *self.extra,
        ]
        if not any(a.startswith("--leader-elect") or a == "--no-leader-elect" for a in self.extra):
            argv.append("--no-leader-elect")
        if self.config is not None:
            argv += ["--config", str(self.config)]
        self.proc = start_logged(argv, self.log_path)

    async def wait_ready(self, within: float = 60.0) -> None:
        def died(code: int) -> str:
            return f"asched exited with {code}:\n{self.logs()[-3000:]}"

        with anyio.fail_after(within):
            async with self.http() as http:
                await wait_serving(http, f"{self.url}/readyz", self.proc, died)

    def http(self) -> aiohttp.ClientSession:
        """A session that speaks to the ops port (TLS as configured)."""
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self.ssl))

    async def metrics(self, token: str | None = None) -> str:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with self.http() as http, http.get(f"{self.url}/metrics", headers=headers) as resp:
            resp.raise_for_status()
            return await resp.text()

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        kill_group(self.proc)

    async def terminate(self, within: float = 30.0) -> int:
        """SIGTERM, then wait for the exit code (in a worker thread: Popen.wait blocks)."""
        assert self.proc is not None
        proc = self.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(within):
            return await anyio.to_thread.run_sync(proc.wait, abandon_on_cancel=True)


def start_logged(argv: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    """Start *argv* in a session of its own, stdout and stderr appended to *log_path*."""
    with log_path.open("ab") as log:
        return subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=os.environ.copy(),
        )


def kill_group(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL *proc*'s whole session (it and its children), if it still runs."""
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


async def wait_serving(
    http: aiohttp.ClientSession,
    url: str,
    proc: subprocess.Popen[bytes] | None,
    died: Callable[[int], str],
) -> None:
    """Poll *url* until it answers 200; RuntimeError with `died(exit code)` once *proc*
    exited. Bound it with fail_after."""
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(died(proc.returncode))
        try:
            async with http.get(url) as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await anyio.sleep(0.1)


def _unverified() -> ssllib.SSLContext:
    ctx = ssllib.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssllib.CERT_NONE
    return ctx


@asynccontextmanager
async def running_asched(
    config: Path | None,
    kubeconfig: Path,
    log_path: Path,
    extra: list[str] | None = None,
    *,
    secure: bool = False,
    ssl: ssllib.SSLContext | None = None,
) -> AsyncIterator[AschedProcess]:
    proc = AschedProcess(config, kubeconfig, log_path, extra, secure=secure, ssl=ssl)
    proc.start()
    try:
        await proc.wait_ready()
        yield proc
    finally:
        proc.kill()
