"""`asched demo` end to end, as a user runs it: a subprocess, its stdout, its exit code.

Each test starts its own control plane (the demo's), not the session's.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from asched.demo.topology import RACK, ZONE, demo_nodes

DEMO_TIMEOUT = 240.0


def _demo_argv(*extra: str) -> list[str]:
    return [sys.executable, "-m", "asched", "demo", *extra]


def _table(out: str) -> dict[str, tuple[str, str, str]]:
    """pod -> (scheduler, node, why), from the closing table."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("POD "))
    rows = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        pod, scheduler, node, why = re.split(r"\s{2,}", line, maxsplit=3)
        rows[pod] = (scheduler, node, why)
    return rows


def _find(pattern: str, out: str) -> str:
    m = re.search(pattern, out)
    assert m is not None, f"{pattern!r} not in the demo's output:\n{out}"
    return m.group(1)


def _started(out: str) -> tuple[Path, dict[str, int]]:
    work_dir = Path(_find(r"work dir: (\S+)", out))
    pids_line = _find(r"pids: (.+)", out)
    pids = {k: int(v) for k, v in (p.split("=") for p in pids_line.split())}
    return work_dir, pids


def _alive(pid: int, work_dir: Path) -> bool:
    """True if *pid* is still one of this cluster's processes (not a reused pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return str(work_dir).encode() in cmdline


def _assert_outcome(out: str, nodes: int = 8) -> None:
    table = _table(out)
    assert table["gpu-pod"][0] == "custom-scheduler"
    assert table["gpu-pod"][1].startswith("gpu-"), table["gpu-pod"]
    for member in ("train-1", "train-2", "train-3"):
        assert table[member][1] not in ("", "pending"), table[member]
    # The native gang: all eight members inside one rack.
    rack_of = {n.name: n.labels[RACK] for n in demo_nodes(nodes)}
    racks = {rack_of.get(table[f"ring-{i}"][1], "pending") for i in range(1, 9)}
    assert len(racks) == 1, racks
    assert racks != {"pending"}
    # The StatefulSet: each replica on the node of its zone's local PV, one per zone.
    zone_of = {n.name: n.labels[ZONE] for n in demo_nodes(nodes)}
    zones = {zone_of.get(table[f"db-{i}"][1], "pending") for i in range(3)}
    assert len(zones) == 3, zones
    assert "pending" not in zones
    assert table["big-pod"][1] == "pending"
    assert "Insufficient cpu" in table["big-pod"][2]
    placed = [p for p, (_, node, _) in table.items() if node != "pending"]
    assert len(placed) == len(table) - 1


def _assert_gone(out: str) -> None:
    work_dir, pids = _started(out)
    assert set(pids) == {"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}
    assert not [name for name, pid in pids.items() if _alive(pid, work_dir)]
    assert not work_dir.exists()


def test_demo_places_the_workload_and_cleans_up() -> None:
    began = time.monotonic()
    proc = subprocess.run(
        _demo_argv(), capture_output=True, text=True, timeout=DEMO_TIMEOUT, check=False
    )
    seconds = time.monotonic() - began
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_outcome(proc.stdout)
    _assert_gone(proc.stdout)
    assert "Stopped:" in proc.stdout
    print(f"asched demo took {seconds:.1f}s")


def test_demo_keep_runs_until_ctrl_c(tmp_path: Path) -> None:
    out_path = tmp_path / "demo.out"
    with out_path.open("w") as out:
        proc = subprocess.Popen(
            _demo_argv("--keep", "--nodes", "5"), stdout=out, stderr=subprocess.STDOUT, text=True
        )
    try:
        deadline = time.monotonic() + DEMO_TIMEOUT
        while "Press Ctrl-C" not in out_path.read_text():
            assert proc.poll() is None, out_path.read_text()
            assert time.monotonic() < deadline, out_path.read_text()
            time.sleep(0.2)
        text = out_path.read_text()
        work_dir, pids = _started(text)
        kubeconfig = Path(_find(r"admin kubeconfig: (\S+)", text))
        assert kubeconfig.exists()
        # Still running while kept.
        time.sleep(1)
        assert proc.poll() is None
        assert all(_alive(pid, work_dir) for pid in pids.values())
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:  # pragma: no cover - only when an assertion failed
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    text = out_path.read_text()
    _assert_outcome(text, nodes=5)
    _assert_gone(text)
