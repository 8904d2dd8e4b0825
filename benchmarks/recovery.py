"""The `faults` scenario's fault: kube-apiserver SIGKILLed and restarted mid-run, and how
fast the scheduler recovers from it (issue "Control-plane faults").

Once `fraction` of the run's pods are bound, `ApiServerRestart.run` kills kube-apiserver
and starts it again on the same port with the same etcd (LocalCluster.restart_apiserver),
and records when it was killed and when it answered /readyz again. `summary` then reports,
from the binds the observer saw:
- `recovery_s`: from the restarted API server's readyz to the last bind of the run;
- `binds_10s_after_ready`: binds in the 10 s after that readyz, and per second;
- `first_bind_after_ready_s`: from readyz to the first bind after it;
- `last_bind_after_kill_s`: from the kill to the last bind (readyz can come late).
A run ends only after the restarted server has answered /readyz.
The same fault at the same point for every scheduler of a command, so the numbers pair.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

from asched.localcluster import LocalCluster
from benchmarks.observer import Binding, BindObserver

log = structlog.get_logger(__name__)

WINDOW_S = 10.0


@dataclass(slots=True)
class ApiServerRestart:
    cluster: LocalCluster
    observer: BindObserver
    #: Restart once this many pods are bound.
    after_bound: int
    killed_at: float = 0.0
    ready_at: float = 0.0
    done: anyio.Event = field(default_factory=anyio.Event)

    async def run(self) -> None:
        await self.observer.wait_bound(self.after_bound)
        self.killed_at = time.time()
        await self.cluster.restart_apiserver()
        self.ready_at = time.time()
        self.done.set()
        log.info(
            "apiserver_restart_done",
            bound_before=len(self.observer.bound),
            down_s=round(self.ready_at - self.killed_at, 2),
        )


def summary(restart: ApiServerRestart, bound: Mapping[str, Binding]) -> dict[str, Any]:
    """The recovery numbers of one run (empty when the restart never happened)."""
    if not restart.ready_at:
        return {"apiserver_restarted": False}
    ready = restart.ready_at
    after = sorted(b.at for b in bound.values() if b.at >= ready)
    window = [t for t in after if t < ready + WINDOW_S]
    out: dict[str, Any] = {
        "apiserver_restarted": True,
        "apiserver_down_s": ready - restart.killed_at,
        "bound_before_restart": sum(1 for b in bound.values() if b.at < restart.killed_at),
        "binds_10s_after_ready": len(window),
        "binds_per_s_10s_after_ready": len(window) / WINDOW_S,
    }
    if after:
        out["recovery_s"] = after[-1] - ready
        out["first_bind_after_ready_s"] = after[0] - ready
    # kube-apiserver serves requests before its /readyz says so (post-start hooks and
    # caches warm up behind it), so a run can also end before readyz: the time from the
    # kill to the last bind is the figure that always exists.
    out["last_bind_after_kill_s"] = max(b.at for b in bound.values()) - restart.killed_at
    return out
