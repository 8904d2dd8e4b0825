"""Starts tests/integration/extender_server.py as a process on loopback for a test."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio

from tests.integration.asched_proc import free_port, kill_group, start_logged, wait_serving


class ExtenderProcess:
    def __init__(self, tmp: Path, rules: dict[str, Any], kubeconfig: Path | None) -> None:
        self.port = free_port()
        self.rules_path = tmp / f"extender-{self.port}.json"
        self.log_path = tmp / f"extender-{self.port}.jsonl"
        self.out_path = tmp / f"extender-{self.port}.out"
        self.kubeconfig = kubeconfig
        self.set_rules(rules)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The urlPrefix to configure."""
        return f"http://127.0.0.1:{self.port}/ext"

    def set_rules(self, rules: dict[str, Any]) -> None:
        self.rules_path.write_text(json.dumps(rules))

    def requests(self) -> list[dict[str, Any]]:
        """What the extender was asked, in order."""
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def start(self) -> None:
        argv = [
            sys.executable,
            "-m",
            "tests.integration.extender_server",
            str(self.rules_path),
            str(self.port),
            str(self.log_path),
        ]
        if self.kubeconfig is not None:
            argv.append(str(self.kubeconfig))
        self.proc = start_logged(argv, self.out_path)

    async def wait_ready(self, within: float = 30.0) -> None:
        def died(code: int) -> str:
            return f"extender exited with {code}: {self.out_path.read_text()}"

        with anyio.fail_after(within):
            async with aiohttp.ClientSession() as http:
                url = f"http://127.0.0.1:{self.port}/healthz"
                await wait_serving(http, url, self.proc, died)

    def kill(self) -> None:
        kill_group(self.proc)


@asynccontextmanager
async def running_extender(
    tmp: Path, rules: dict[str, Any], kubeconfig: Path | None = None
) -> AsyncIterator[ExtenderProcess]:
    proc = ExtenderProcess(tmp, rules, kubeconfig)
    proc.start()
    try:
        await proc.wait_ready()
        yield proc
    finally:
        proc.kill()
