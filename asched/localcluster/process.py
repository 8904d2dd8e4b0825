"""Run one control-plane component as a child process that can always be stopped.

Each component gets its own session (and so its own process group): a Ctrl-C in the
terminal reaches only the Python parent, which then stops the components in order, and
stopping signals the whole group so nothing the component spawned survives it. Output goes
to a log file, not a pipe, so no task has to drain it and a failed start can show its tail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import structlog

log = structlog.get_logger()

DEFAULT_GRACE = 10.0


def _open_log(path: Path) -> IO[Any]:
    return path.open("ab")


@dataclass(slots=True)
class ManagedProcess:
    """A running component: its name, process handle and log file."""

    name: str
    process: anyio.abc.Process
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def running(self) -> bool:
        return self.process.returncode is None

    async def log_tail(self, lines: int = 25) -> str:
        """The last *lines* lines of the component's output, for error messages."""
        try:
            data = await anyio.Path(self.log_path).read_bytes()
        except FileNotFoundError:
            return ""
        return "\n".join(data.decode(errors="replace").splitlines()[-lines:])

    def _signal_group(self, sig: signal.Signals) -> None:
        # Only while the leader is not yet reaped: afterwards its pid (and group id) may
        # belong to someone else.
        if self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)

    async def kill(self) -> None:
        """SIGKILL the process group and reap it, as a crash would end it (no shutdown)."""
        with anyio.CancelScope(shield=True):
            self._signal_group(signal.SIGKILL)
            await self.process.wait()
        log.debug("component_killed", component=self.name, returncode=self.returncode)

    async def stop(self, grace: float = DEFAULT_GRACE) -> None:
        """SIGTERM the process group, wait up to *grace* seconds, then SIGKILL it.

        Idempotent, and safe to call after the process has died on its own.
        """
        with anyio.CancelScope(shield=True):
            if self.running():
                self._signal_group(signal.SIGTERM)
                with anyio.move_on_after(grace):
                    await self.process.wait()
                if self.running():
                    log.warning("component_kill", component=self.name, pid=self.pid, grace=grace)
                    self._signal_group(signal.SIGKILL)
            await self.process.wait()
            await self.process.aclose()
            log.debug("component_stopped", component=self.name, returncode=self.returncode)


async def spawn(
    name: str,
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> ManagedProcess:
    """Start *argv* in a new session with stdout and stderr appended to *log_path*."""
    logfile = await anyio.to_thread.run_sync(_open_log, log_path)
    try:
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    finally:
        # The child holds its own copy of the descriptor.
        logfile.close()
    log.debug("component_started", component=name, pid=process.pid)
    return ManagedProcess(name, process, log_path)
