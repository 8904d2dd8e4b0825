"""Which event-loop step makes a transient peak of Python memory: memtrace's `--step-peaks`.

memtrace (benchmarks/memtrace.py) found that an API-server restart raises the traced
Python memory by several MiB for a moment and that pymalloc's arenas keep what that
moment made them grow to; a thread polling every 10 ms never saw the peak, so it is
made and freed within a few steps of the event loop. This measures each step instead:
every callback the loop runs (a task's step, a transport's read, a timer) is wrapped so
that tracemalloc's peak is reset before it and read after it, and a step whose peak
passes the memory before it by the threshold is written down, with what ran:

- the callback (for a task step, the task's coroutine and the chain of coroutines it
  awaits when the step ended, innermost last, as file:line);
- the traced memory before the step, its peak during it and what was left after it.

It needs the pure-Python loop and tasks (uvloop's and the C Task's steps cannot be
wrapped), so asched runs on asyncio's own loop for such a run, and slower: the records
say where a peak is made, not how fast anything is.
"""

from __future__ import annotations

import asyncio
import asyncio.events
import asyncio.tasks
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import CoroutineType
from typing import Any

import orjson

# The await chain is cut at this depth: the frames near the step's task are enough.
CHAIN_DEPTH = 12


def _chain(coro: object) -> list[str]:
    """file:line of each coroutine *coro* awaits, outermost first."""
    out: list[str] = []
    while isinstance(coro, CoroutineType) and len(out) < CHAIN_DEPTH:
        frame = coro.cr_frame
        if frame is not None:
            code = frame.f_code
            out.append(f"{_short(code.co_filename)}:{frame.f_lineno} {code.co_qualname}")
        coro = coro.cr_await
    return out


def _owner_name(coro: object) -> str | None:
    """The `name` of the innermost object in the await chain whose method is running and
    that has one (an informer says which resource it lists and watches)."""
    found = None
    while isinstance(coro, CoroutineType):
        frame = coro.cr_frame
        owner = frame.f_locals.get("self") if frame is not None else None
        name = getattr(owner, "name", None)
        if isinstance(name, str) and not type(owner).__module__.startswith("anyio"):
            found = f"{type(owner).__name__} {name}"
        coro = coro.cr_await
    return found


def _short(filename: str) -> str:
    for marker in ("/asched/", "/benchmarks/", "/site-packages/", "/lib/python3"):
        at = filename.rfind(marker)
        if at >= 0:
            return filename[at + 1 :]
    return filename


def _describe(callback: Callable[..., Any]) -> dict[str, Any]:
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        name = getattr(coro, "__qualname__", repr(coro))
        return {
            "task": owner.get_name(),
            "coro": name,
            "chain": _chain(coro),
            "object": _owner_name(coro),
        }
    name = getattr(callback, "__qualname__", None) or repr(callback)
    return {"callback": name, "owner": type(owner).__name__ if owner is not None else None}


class StepPeaks:
    """Wraps asyncio's Handle._run; writes `steps.jsonl` in *out_dir*."""

    def __init__(self, out_dir: Path, threshold: int) -> None:
        self._path = out_dir / "steps.jsonl"
        self._threshold = threshold
        self._lock = threading.Lock()
        self._began = time.monotonic()
        self.recorded = 0

    def install(self) -> None:
        """Before asched starts its loop: no uvloop, the pure-Python Task, wrapped steps."""
        # asched.cli picks uvloop when it imports; None in sys.modules makes the import fail.
        sys.modules["uvloop"] = None  # type: ignore[assignment]
        py_task = asyncio.tasks._PyTask  # type: ignore[attr-defined]
        asyncio.tasks.Task = py_task  # type: ignore[misc]
        asyncio.Task = py_task  # type: ignore[misc]
        original = asyncio.events.Handle._run
        watch = self

        def run(handle: asyncio.events.Handle) -> None:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            original(handle)
            after, peak = tracemalloc.get_traced_memory()
            if peak - before >= watch._threshold:
                watch._record(handle, before, peak, after)

        setattr(asyncio.events.Handle, "_run", run)  # noqa: B010 - typeshed types _run oddly

    def _record(self, handle: asyncio.events.Handle, before: int, peak: int, after: int) -> None:
        entry = {
            "at_s": round(time.monotonic() - self._began, 3),
            "before": before,
            "peak": peak,
            "after": after,
            **_describe(handle._callback),  # type: ignore[attr-defined]
        }
        with self._lock, self._path.open("ab") as out:
            out.write(orjson.dumps(entry) + b"\n")
        self.recorded += 1


def summary(path: Path, top: int = 15) -> list[str]:
    """The recorded steps grouped by what ran (the coroutine and its innermost await, or
    the callback): how many, the largest rise over the memory before the step, and when."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_bytes().splitlines():
        entry = orjson.loads(line)
        chain = entry.get("chain") or []
        key = entry.get("coro") or entry.get("callback") or "?"
        if chain:
            key = f"{key} -> {chain[-1]}"
        if entry.get("object"):
            key = f"{key} [{entry['object']}]"
        groups.setdefault(key, []).append(entry)
    rows = sorted(groups.items(), key=lambda kv: -max(e["peak"] - e["before"] for e in kv[1]))
    lines = [f"{'steps':>6} {'max rise MiB':>13} {'left MiB':>9}  at (s)  what ran"]
    for key, entries in rows[:top]:
        worst = max(entries, key=lambda e: e["peak"] - e["before"])
        rise = (worst["peak"] - worst["before"]) / 2**20
        left = (worst["after"] - worst["before"]) / 2**20
        times = ",".join(str(round(e["at_s"])) for e in entries[:6])
        lines.append(f"{len(entries):>6} {rise:>13.2f} {left:>9.2f}  {times}  {key}")
    return lines
