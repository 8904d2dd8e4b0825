"""The `faults` scenario's fault: kube-apiserver SIGKILLed and restarted mid-run, and how
fast the scheduler recovers from it (issue "Control-plane faults").

Once `fraction` of the run's pods are bound, `ApiServerRestart.run` kills kube-apiserver
and starts it again at once on the same port with the same etcd
(LocalCluster.restart_apiserver), and records when it was killed, when the new process
first served a read from storage (GET the default namespace: 200), and when it answered
/readyz. (/livez is no earlier mark: in a trial run it answered 200 no sooner than
/readyz, while the server was already serving requests.) `summary` then reports, from
the binds the observer saw:
- `recovery_s`: from the restarted API server's readyz to the last bind of the run;
- `binds_10s_after_ready`: binds in the 10 s after that readyz, and per second;
- `first_bind_after_ready_s`: from readyz to the first bind after it;
- `first_bind_after_kill_s`, `last_bind_after_kill_s`: from the kill, which is also the new
  process's start (it is started as soon as the old one is reaped), to the first bind after
  it and the last bind of the run. readyz comes 15-20 s after the kill on this machine,
  after every bind, so these two always exist;
- `serving_after_kill_s`, `first_bind_after_serving_s`, `last_bind_after_serving_s`: the
  same from the new process's first served read, which separates the server's own
  start-up from the scheduler's recovery.
A run ends only after the restarted server has answered /readyz.
The same fault at the same point for every scheduler of a command, so the numbers pair.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

from asched.localcluster import LocalCluster
from benchmarks.observer import Binding, BindObserver

log = structlog.get_logger(__name__)

WINDOW_S = 10.0
# How often the restarted server is asked whether it serves, while it starts.
SERVING_POLL_S = 0.05


@dataclass(slots=True)
class ApiServerRestart:
    cluster: LocalCluster
    observer: BindObserver
    #: Restart once this many pods are bound.
    after_bound: int
    #: Whether the API server serves a read (False while it cannot be reached).
    serving: Callable[[], Awaitable[bool]]
    killed_at: float = 0.0
    serving_at: float = 0.0
    ready_at: float = 0.0
    done: anyio.Event = field(default_factory=anyio.Event)

    async def run(self) -> None:
        await self.observer.wait_bound(self.after_bound)
        self.killed_at = time.time()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_serving)
            await self.cluster.restart_apiserver()
            self.ready_at = time.time()
            tg.cancel_scope.cancel()
        if not self.serving_at:
            self.serving_at = self.ready_at  # serving no later than ready
        self.done.set()
        log.info(
            "apiserver_restart_done",
            bound_before=len(self.observer.bound),
            serving_s=round(self.serving_at - self.killed_at, 2),
            down_s=round(self.ready_at - self.killed_at, 2),
        )

    async def _watch_serving(self) -> None:
        # The old process may answer until it is reaped: the first probe comes after the
        # kill, which restart_apiserver does before anything else (SIGKILL and wait).
        while True:
            await anyio.sleep(SERVING_POLL_S)
            if await self.serving():
                self.serving_at = time.time()
                return


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
    # caches warm up behind it), so a run can also end before readyz: the times from the
    # kill (the new process's start) and from its first served read are the figures
    # that always exist.
    last = max(b.at for b in bound.values())
    out["last_bind_after_kill_s"] = last - restart.killed_at
    since_kill = [b.at for b in bound.values() if b.at >= restart.killed_at]
    if since_kill:
        out["first_bind_after_kill_s"] = min(since_kill) - restart.killed_at
    serving = restart.serving_at
    out["serving_after_kill_s"] = serving - restart.killed_at
    since_serving = [t for t in since_kill if t >= serving]
    if since_serving:
        out["first_bind_after_serving_s"] = min(since_serving) - serving
        out["last_bind_after_serving_s"] = last - serving
    return out
