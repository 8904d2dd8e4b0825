"""CPU time and peak memory of a process, read from /proc (Linux only).

The benchmark compares what each scheduler costs the machine: CPU seconds (user + system,
all threads) and peak resident memory. Both come from the kernel's own accounting, so a Go
binary and a Python process are measured the same way. The reads are small procfs files
that never touch a disk, so the harness calls them directly from its event loop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class ProcUsage:
    cpu_seconds: float
    peak_rss_bytes: int


def cpu_seconds(pid: int) -> float:
    """utime + stime of *pid* (all its threads) plus cutime + cstime (its children that it
    waited for: asched's certificate generator, asched.server.certgen), in seconds."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) is in parentheses and may contain spaces: split after it.
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); utime, stime, cutime and cstime are fields 14 to 17.
    return sum(int(f) for f in fields[11:15]) / _CLK_TCK


def peak_rss_bytes(pid: int) -> int:
    """VmHWM: the highest resident set size *pid* has had."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise ValueError(f"no VmHWM in /proc/{pid}/status")


def rss_bytes(pid: int) -> int:
    """VmRSS: the resident set size *pid* has now."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise ValueError(f"no VmRSS in /proc/{pid}/status")


def usage(pid: int) -> ProcUsage:
    return ProcUsage(cpu_seconds(pid), peak_rss_bytes(pid))


def cpu_seconds_or_nan(pid: int) -> float:
    """Like cpu_seconds, but NaN when the process is gone."""
    try:
        return cpu_seconds(pid)
    except (OSError, ValueError):
        return float("nan")
