from __future__ import annotations

from pathlib import Path

import anyio

from asched.localcluster.process import spawn
from asched.localcluster.state import process_alive


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


async def test_stop_terminates_gracefully(tmp_path: Path) -> None:
    proc = await spawn("sleeper", ["sleep", "30"], tmp_path / "log")
    assert proc.running()
    await proc.stop(grace=5)
    assert proc.returncode == -15
    assert not alive(proc.pid)
    await proc.stop()  # idempotent


async def test_stop_kills_the_whole_group_when_term_is_ignored(tmp_path: Path) -> None:
    script = "trap '' TERM; sleep 30 & echo $! > child; echo started; wait"
    proc = await spawn("stubborn", ["sh", "-c", script], tmp_path / "log", cwd=tmp_path)
    with anyio.fail_after(5):
        while True:
            if "started" in await proc.log_tail():
                break
            await anyio.sleep(0.02)
    child = int((tmp_path / "child").read_text())
    assert alive(child)
    await proc.stop(grace=0.3)
    assert proc.returncode == -9
    with anyio.fail_after(5):  # the grandchild got SIGKILL too (PID 1 reaps it)
        while True:
            if not process_alive(child):
                break
            await anyio.sleep(0.02)


async def test_log_captures_output_and_exit(tmp_path: Path) -> None:
    proc = await spawn("echo", ["sh", "-c", "echo one; echo two >&2; exit 3"], tmp_path / "l")
    await proc.process.wait()
    assert proc.returncode == 3
    assert await proc.log_tail() == "one\ntwo"
    assert await proc.log_tail(1) == "two"
    await proc.stop()
