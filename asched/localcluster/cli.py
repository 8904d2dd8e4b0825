"""``asched cluster up|status|down``: a local control plane that outlives the command.

``up`` starts a detached supervisor (see supervisor.py) and returns once the cluster and
its nodes are Ready, printing the kubeconfig paths; ``status`` reports on it; ``down``
stops it and removes every file it made. The commands are synchronous: they run no event
loop except around the few REST calls of ``status``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio

import asched
from asched.localcluster.components import COMPONENTS
from asched.localcluster.nodes import KWOK_LABEL, NODES_PATH, is_ready
from asched.localcluster.rest import ApiError, ClusterClient
from asched.localcluster.state import (
    CLUSTER_SUBDIR,
    STATE_FILE,
    SUPERVISOR_LOG,
    SUPERVISOR_MODULE,
    ClusterState,
    components_referencing,
    default_state_dir,
    process_alive,
    read_state,
)
from asched.localcluster.supervisor import add_cluster_options, cluster_option_argv

DOWN_TIMEOUT = 60.0


def add_cluster_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``cluster`` and its subcommands on an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "cluster", help="run a local control plane (etcd, kube-apiserver, kwok)"
    )
    sub = parser.add_subparsers(dest="cluster_command", required=True)
    up = sub.add_parser("up", help="start a cluster in the background; return when Ready")
    add_cluster_options(up)
    status = sub.add_parser("status", help="show whether a cluster runs and where")
    down = sub.add_parser("down", help="stop the cluster and remove its files")
    for p in (up, status, down):
        p.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="state directory (default $ASCHED_STATE_DIR or ~/.local/state/asched/cluster)",
        )
    return parser


def run_cluster_command(args: argparse.Namespace) -> int:
    """Run the parsed ``cluster`` subcommand; return the process exit code."""
    state_dir: Path = args.dir or default_state_dir()
    commands = {"up": _up, "status": _status, "down": _down}
    return commands[args.cluster_command](state_dir.absolute(), args)


# -- up -------------------------------------------------------------------------------


def _supervisor_env() -> dict[str, str]:
    env = dict(os.environ)
    # The supervisor must import this same asched, installed or not.
    root = str(Path(asched.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _spawn_supervisor(state_dir: Path, args: argparse.Namespace) -> int:
    argv = [
        sys.executable,
        "-m",
        SUPERVISOR_MODULE,
        f"--dir={state_dir}",
        *cluster_option_argv(args),
    ]
    log_flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    return os.posix_spawn(
        sys.executable,
        argv,
        _supervisor_env(),
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(state_dir / SUPERVISOR_LOG), log_flags, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ],
        # A session of its own: the terminal's Ctrl-C and hang-up do not reach it.
        setsid=True,
    )


def _log_tail(state_dir: Path, lines: int = 20) -> str:
    try:
        text = (state_dir / SUPERVISOR_LOG).read_text(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _up(state_dir: Path, args: argparse.Namespace) -> int:
    existing = read_state(state_dir)
    if existing and process_alive(existing.supervisor_pid, SUPERVISOR_MODULE):
        print(f"a cluster already runs from {state_dir}; run `asched cluster down` first")
        return 1
    if existing is None and (state_dir / CLUSTER_SUBDIR).exists():
        # Not made by us (no state file): never start over, or later delete, someone's files.
        print(f"{state_dir / CLUSTER_SUBDIR} exists but no cluster state; choose another --dir")
        return 1
    _remove_leftovers(state_dir, existing)
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    pid = _spawn_supervisor(state_dir, args)
    deadline = time.monotonic() + args.ready_timeout + 30
    try:
        while True:
            exited, _ = os.waitpid(pid, os.WNOHANG)
            state = read_state(state_dir)
            if state and state.phase == "ready":
                _print_ready(state)
                return 0
            if exited:
                error = state.error if state and state.error else "supervisor exited early"
                print(f"cluster failed to start: {error}\n{_log_tail(state_dir)}", file=sys.stderr)
                _remove_leftovers(state_dir, state)
                return 1
            if time.monotonic() > deadline:
                print("cluster not ready in time; stopping it", file=sys.stderr)
                _stop_supervisor(pid, state)
                _remove_leftovers(state_dir, state)
                return 1
            time.sleep(0.1)
    except KeyboardInterrupt:
        _stop_supervisor(pid, read_state(state_dir))
        _remove_leftovers(state_dir, read_state(state_dir))
        return 130


def _print_ready(state: ClusterState) -> None:
    print(f"cluster ready in {state.seconds_to_ready}s: {state.server} ({state.nodes} nodes)")
    print(f"admin kubeconfig:     {state.admin_kubeconfig}")
    print(f"scheduler kubeconfig: {state.scheduler_kubeconfig}")
    print("stop it with:         asched cluster down")


# -- status ---------------------------------------------------------------------------


async def _query(state: ClusterState) -> tuple[bool, int, int]:
    async with await ClusterClient.from_kubeconfig(
        Path(state.admin_kubeconfig), timeout=10
    ) as client:
        status, _ = await client.request_raw("GET", "/readyz")
        nodes = await client.list(NODES_PATH, params={"labelSelector": f"{KWOK_LABEL}=kwok"})
    return status == 200, len(nodes), sum(1 for n in nodes if is_ready(n))


def _status(state_dir: Path, args: argparse.Namespace) -> int:
    state = read_state(state_dir)
    if state is None:
        print(f"running: no (no cluster in {state_dir})")
        return 1
    alive = process_alive(state.supervisor_pid, SUPERVISOR_MODULE)
    if not alive or state.phase != "ready":
        print(f"running: no (phase {state.phase}{', supervisor gone' if not alive else ''})")
        if state.error:
            print(f"error: {state.error}")
        return 1
    try:
        ready, nodes, ready_nodes = anyio.run(_query, state)
    except (OSError, TimeoutError, ApiError) as err:
        print(f"running: supervisor up, API server unreachable ({err})")
        return 1
    print(f"running: {'yes' if ready else 'yes, but /readyz fails'}")
    print(f"server: {state.server}")
    print(f"nodes: {nodes} ({ready_nodes} Ready)")
    print(f"admin kubeconfig: {state.admin_kubeconfig}")
    print(f"scheduler kubeconfig: {state.scheduler_kubeconfig}")
    print(f"supervisor pid: {state.supervisor_pid}; log: {state_dir / SUPERVISOR_LOG}")
    return 0 if ready else 1


# -- down -----------------------------------------------------------------------------


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaps it if it is our child (from `up`)
        time.sleep(0.1)
    return True


def _stop_supervisor(pid: int, state: ClusterState | None) -> None:
    """SIGTERM the supervisor and wait; SIGKILL it if it hangs."""
    if process_alive(pid, SUPERVISOR_MODULE):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not _wait_gone(pid, DOWN_TIMEOUT):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, 5)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _remove_leftovers(state_dir: Path, state: ClusterState | None) -> None:
    """Kill components a dead supervisor left behind, then delete the files we made.

    The work directory is only known (and only removed) through the state file, which the
    supervisor writes before it creates anything.
    """
    if state is not None:
        work_dir = Path(state.work_dir)
        for pid in components_referencing(str(work_dir), COMPONENTS):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            _wait_gone(pid, 5)
        shutil.rmtree(work_dir, ignore_errors=True)
    for name in (STATE_FILE, f".{STATE_FILE}.tmp", SUPERVISOR_LOG):
        with contextlib.suppress(FileNotFoundError):
            (state_dir / name).unlink()
    with contextlib.suppress(OSError):
        state_dir.rmdir()  # only if empty: never delete what is not ours


def _down(state_dir: Path, args: argparse.Namespace) -> int:
    state = read_state(state_dir)
    if state is None and not state_dir.exists():
        print(f"no cluster in {state_dir}")
        return 0
    if state is not None:
        _stop_supervisor(state.supervisor_pid, state)
    _remove_leftovers(state_dir, state)
    print(f"cluster stopped; removed {state_dir}")
    return 0


__all__ = ["add_cluster_parser", "run_cluster_command"]
