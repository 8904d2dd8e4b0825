"""Sampling asched while it runs a benchmark, and reading the samples back as hot spots.

`--py-spy PATH` attaches py-spy (`record --pid`, non-blocking, so the scheduler is never
paused) to asched for the whole run and writes collapsed stacks ("a;b;c 42" lines) next
to the results. `python -m benchmarks hotspots FILE` prints where the samples fall: self
time by function and inclusive time by function, as shares of all samples. py-spy is an
optional tool, not a dependency: `pip install py-spy` anywhere and pass its path.
"""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc


@dataclass(slots=True)
class PySpy:
    """One `py-spy record` attached to a running process; stop() flushes its output."""

    executable: Path
    output: Path
    rate: int = 100
    # C frames too (OpenSSL, the event loop, libc's system calls), for in-process benches:
    # py-spy then pauses the process at each sample (it cannot read C stacks otherwise).
    native: bool = False
    _process: anyio.abc.Process | None = None

    async def attach(self, pid: int) -> None:
        argv = [
            str(self.executable),
            "record",
            "--pid",
            str(pid),
            "--rate",
            str(self.rate),
            "--format",
            "raw",
            "--output",
            str(self.output),
        ]
        argv.append("--native" if self.native else "--nonblocking")
        log = self.output.with_suffix(".log").open("ab")
        try:
            self._process = await anyio.open_process(argv, stdout=log, stderr=log)
        finally:
            log.close()

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.returncode is None:
            process.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            with anyio.move_on_after(30):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
        await process.aclose()


def _frames(stack: str) -> list[str]:
    # py-spy raw frames look like "function (module/path.py:123)"; drop the line number
    # so one function is one row.
    out = []
    for frame in stack.split(";"):
        name, _, where = frame.partition(" (")
        path = where.rsplit(":", 1)[0]
        out.append(f"{name} ({path})" if path else name)
    return out


def hotspots(lines: Iterable[str], top: int = 25) -> str:
    """Self and inclusive sample shares of the functions in collapsed-stack *lines*."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in lines:
        stack, _, count_text = line.rstrip().rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = _frames(stack)
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if total == 0:
        return "no samples"
    rows = [f"{total} samples", "", "self %  function"]
    rows += [f"{100 * n / total:5.1f}  {f}" for f, n in own.most_common(top)]
    rows += ["", "incl %  function"]
    rows += [f"{100 * n / total:5.1f}  {f}" for f, n in inclusive.most_common(top)]
    return "\n".join(rows)


def hotspots_of(path: Path, top: int = 25) -> str:
    with path.open() as f:
        return hotspots(f, top)
