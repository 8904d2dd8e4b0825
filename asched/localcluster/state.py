"""The state file that links ``asched cluster up``, ``status`` and ``down``.

``up`` returns while a detached supervisor keeps the cluster running, so later commands
need to find that supervisor and its cluster. The supervisor writes ``state.json`` in the
state directory (atomically: write, then rename) when it starts, when the cluster is ready,
and when it fails or stops. The directory defaults to a per-user state dir, never the
checkout, because it holds bearer tokens (in the kubeconfigs) and etcd data.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

STATE_FILE = "state.json"
SUPERVISOR_LOG = "supervisor.log"
CLUSTER_SUBDIR = "cluster"
SUPERVISOR_MODULE = "asched.localcluster.supervisor"

Phase = Literal["starting", "ready", "failed", "stopped"]


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$ASCHED_STATE_DIR``, else ``$XDG_STATE_HOME/asched/localcluster``, else
    ``~/.local/state/asched/cluster``."""
    env = os.environ if env is None else env
    if env.get("ASCHED_STATE_DIR"):
        return Path(env["ASCHED_STATE_DIR"])
    home = Path(env.get("HOME") or Path.home())
    base = Path(env.get("XDG_STATE_HOME") or home / ".local" / "state")
    return base / "asched" / "cluster"


@dataclass(slots=True)
class ClusterState:
    supervisor_pid: int
    phase: Phase
    work_dir: str
    server: str = ""
    admin_kubeconfig: str = ""
    scheduler_kubeconfig: str = ""
    pids: dict[str, int] = field(default_factory=dict)
    nodes: int = 0
    error: str = ""
    seconds_to_ready: float = 0.0

    def to_json(self) -> bytes:
        return orjson.dumps(dataclasses.asdict(self), option=orjson.OPT_INDENT_2)

    @classmethod
    def from_json(cls, raw: bytes) -> ClusterState:
        data: dict[str, Any] = orjson.loads(raw)
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def write_state(state_dir: Path, state: ClusterState) -> None:
    """Replace the state file atomically, so a reader never sees half of it."""
    tmp = state_dir / f".{STATE_FILE}.tmp"
    tmp.write_bytes(state.to_json())
    tmp.chmod(0o600)
    tmp.replace(state_dir / STATE_FILE)


def read_state(state_dir: Path) -> ClusterState | None:
    try:
        return ClusterState.from_json((state_dir / STATE_FILE).read_bytes())
    except FileNotFoundError:
        return None


def process_alive(pid: int, cmdline_contains: str | None = None) -> bool:
    """True if *pid* runs (zombies count as dead) and, if given, its command line contains
    *cmdline_contains* - a guard against signalling a recycled pid."""
    proc = Path(f"/proc/{pid}")
    try:
        stat = (proc / "stat").read_text()
        # Field 3, after the parenthesised command name, is the state.
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return False
        if cmdline_contains is not None:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            return cmdline_contains in cmdline
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return True


def components_referencing(text: str, executables: Iterable[str]) -> list[int]:
    """Pids of live processes run from one of *executables* (base names) whose command line
    contains *text* - a cluster's work directory, which every component's flags name.

    Used to find components whose supervisor died before it could stop them; matching the
    executable as well keeps, say, an editor showing a component's log out of reach.
    """
    needle = text.encode()
    names = set(executables)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        executable = Path(argv[0].decode(errors="replace")).name
        if executable in names and any(needle in arg for arg in argv[1:]):
            found.append(int(entry.name))
    return [pid for pid in found if process_alive(pid)]
