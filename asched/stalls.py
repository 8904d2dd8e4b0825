"""Who held the event loop: a watchdog thread that reports long stalls with a stack.

The loop-lag histogram (looplag.py) says *that* the loop was late, never *why*: by the
time the late sleeper runs, whatever blocked the loop has returned. This watchdog sees it
while it happens. A task on the loop stamps a heartbeat every `interval`; a daemon thread
checks the stamp, and when it is older than `threshold` it samples the loop thread's stack
(sys._current_frames), then logs it once the loop is back, with how long it was held.
It is a diagnostic, off unless `asched run --report-stalls-ms N` (or the environment
variable ASCHED_REPORT_STALLS_MS) asks for it: the thread wakes every few milliseconds.

A stall inside one C call that keeps the GIL (a huge orjson.loads) delays the thread
too; the stack is then taken right after, usually still inside the same caller.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback

import anyio
import structlog

log = structlog.get_logger(__name__)

_FRAMES = 12  # innermost frames worth logging


class StallWatch:
    """Run `heartbeat()` as a task on the loop; the thread starts and stops with it."""

    def __init__(self, threshold: float, *, interval: float = 0.005) -> None:
        if threshold <= 0:
            raise ValueError(f"threshold must be > 0, got {threshold}")
        self.threshold = threshold
        self.interval = interval
        self.stalls = 0
        self._beat = time.monotonic()
        self._loop_thread = threading.get_ident()
        self._stop = threading.Event()

    async def heartbeat(self) -> None:
        self._loop_thread = threading.get_ident()
        thread = threading.Thread(target=self._watch, name="asched-stall-watch", daemon=True)
        thread.start()
        try:
            while True:
                self._beat = time.monotonic()
                await anyio.sleep(self.interval)
        finally:
            self._stop.set()

    def _watch(self) -> None:
        pending: tuple[float, list[str]] | None = None  # the stalled beat and its stack
        while not self._stop.wait(self.interval):
            beat = self._beat
            if pending is not None and beat != pending[0]:
                # The loop is back: the stall lasted from its last beat to this one.
                self.stalls += 1
                held = beat - pending[0] - self.interval
                log.warning("event_loop_stall", held_ms=round(held * 1e3, 1), stack=pending[1])
                pending = None
            if pending is None and time.monotonic() - beat >= self.threshold:
                pending = (beat, self._loop_stack())

    def _loop_stack(self) -> list[str]:
        frame = sys._current_frames().get(self._loop_thread)
        if frame is None:
            return []
        summary = traceback.extract_stack(frame)[-_FRAMES:]
        return [f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno} {f.name}" for f in summary]
