"""Starting and stopping a control plane leaves nothing behind: no process, no directory.

Checked by pid (/proc/<pid> absent for every component) after a clean stop, a start that
fails half-way, a start cancelled half-way, and the CLI's up/status/down round trip -
including a `down` after the supervisor itself was killed.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import orjson
import pytest

from asched.localcluster import ClusterClient, ClusterStartError, LocalCluster
from asched.localcluster.state import process_alive

REPO = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


async def test_start_and_stop_leave_no_process_and_no_directory() -> None:
    async with LocalCluster() as cluster:
        pids = list(cluster.pids.values())
        work_dir = cluster.work_dir
        assert len(pids) == 4
        assert all(alive(p) for p in pids)
        assert work_dir.is_dir()
        assert (work_dir / "admin.kubeconfig").is_file()
    assert not any(alive(p) for p in pids)
    assert not work_dir.exists()


async def test_failed_start_cleans_up(tmp_path: Path) -> None:
    work_dir = tmp_path / "cluster"
    cluster = LocalCluster(work_dir=work_dir, extra_args={"kube-apiserver": ["--no-such-flag=1"]})
    with pytest.raises(ClusterStartError, match=r"kube-apiserver exited with code \d+"):
        await cluster.start()
    pids = cluster.pids
    assert set(pids) == {"etcd", "kube-apiserver"}  # etcd was up when the API server failed
    assert not any(alive(p) for p in pids.values())
    assert not work_dir.exists()


async def test_cancelled_start_cleans_up(tmp_path: Path) -> None:
    work_dir = tmp_path / "cluster"
    cluster = LocalCluster(work_dir=work_dir)
    with anyio.move_on_after(1.5) as scope:  # etcd is up, kube-apiserver still starting
        await cluster.start()
    assert scope.cancelled_caught
    assert cluster.pids
    assert not any(alive(p) for p in cluster.pids.values())
    assert not work_dir.exists()


def asched_cli(
    state_dir: Path, *args: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASCHED_STATE_DIR": str(state_dir)}
    return subprocess.run(
        [sys.executable, "-m", "asched", "cluster", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def state_pids(state_dir: Path) -> tuple[int, list[int]]:
    state = orjson.loads((state_dir / "state.json").read_bytes())
    return state["supervisor_pid"], list(state["pids"].values())


async def count_nodes(kubeconfig: Path) -> int:
    async with await ClusterClient.from_kubeconfig(kubeconfig) as client:
        return len(await client.list("/api/v1/nodes"))


def test_cli_up_status_down_round_trip(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    up = asched_cli(state_dir, "up", "--nodes", "5", "--gpu-nodes", "1")
    assert up.returncode == 0, up.stderr
    kubeconfigs = dict(re.findall(r"^(admin|scheduler) kubeconfig:\s+(\S+)$", up.stdout, re.M))
    assert set(kubeconfigs) == {"admin", "scheduler"}, up.stdout
    supervisor, pids = state_pids(state_dir)
    assert len(pids) == 4
    assert all(alive(p) for p in pids)

    status = asched_cli(state_dir, "status")
    assert status.returncode == 0, status.stdout
    assert "running: yes" in status.stdout
    assert "nodes: 5 (5 Ready)" in status.stdout
    # The scheduler kubeconfig works (and is not admin: it may list, the check is elsewhere).
    assert anyio.run(count_nodes, Path(kubeconfigs["scheduler"])) == 5

    again = asched_cli(state_dir, "up")
    assert again.returncode == 1
    assert "already runs" in again.stdout

    down = asched_cli(state_dir, "down")
    assert down.returncode == 0, down.stderr
    assert not any(alive(p) for p in pids)
    # The supervisor is not our child; where PID 1 does not reap orphans it lingers as a
    # zombie, which is not running.
    assert not process_alive(supervisor)
    assert not state_dir.exists()

    after = asched_cli(state_dir, "status")
    assert after.returncode == 1
    assert "running: no" in after.stdout


def test_cli_down_after_supervisor_was_killed(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    up = asched_cli(state_dir, "up")
    assert up.returncode == 0, up.stderr
    supervisor, pids = state_pids(state_dir)
    os.kill(supervisor, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while process_alive(supervisor) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(alive(p) for p in pids)  # orphaned, still running

    status = asched_cli(state_dir, "status")
    assert status.returncode == 1
    assert "supervisor gone" in status.stdout
    down = asched_cli(state_dir, "down")
    assert down.returncode == 0, down.stderr
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
    assert not state_dir.exists()
