from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asched.localcluster.state import (
    ClusterState,
    components_referencing,
    default_state_dir,
    process_alive,
    read_state,
    write_state,
)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({"ASCHED_STATE_DIR": "/s", "HOME": "/h"}, "/s", id="env"),
        pytest.param({"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/asched/cluster", id="xdg"),
        pytest.param({"HOME": "/h"}, "/h/.local/state/asched/cluster", id="home"),
    ],
)
def test_default_state_dir(env: dict[str, str], expected: str) -> None:
    assert default_state_dir(env) == Path(expected)


def test_state_round_trip_is_private(tmp_path: Path) -> None:
    assert read_state(tmp_path) is None
    state = ClusterState(supervisor_pid=1, phase="ready", work_dir="/w", pids={"etcd": 2})
    write_state(tmp_path, state)
    assert read_state(tmp_path) == state
    assert (tmp_path / "state.json").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_process_alive() -> None:
    assert process_alive(os.getpid())
    assert process_alive(os.getpid(), "python")
    assert not process_alive(os.getpid(), "no-such-command-line")
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert not process_alive(proc.pid)


def test_components_referencing_matches_executable_and_argument(tmp_path: Path) -> None:
    marker = str(tmp_path / "work")
    exe = sys.executable
    sleeper = subprocess.Popen([exe, "-c", "import time; time.sleep(30)", f"--dir={marker}"])
    try:
        deadline = time.monotonic() + 5
        # Right after fork the child's cmdline can still be empty; give exec a moment.
        while not components_referencing(marker, [Path(exe).name]):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert components_referencing(marker, [Path(exe).name]) == [sleeper.pid]
        assert components_referencing(marker, ["etcd"]) == []
        assert components_referencing(marker + "-other", [Path(exe).name]) == []
    finally:
        sleeper.kill()
        sleeper.wait()
