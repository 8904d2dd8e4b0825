"""procstat counts a process's waited-for children: asched's certificate generator runs as
one (asched.server.certgen), and its CPU is asched's."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from benchmarks import procstat


def test_cpu_seconds_include_children_that_were_waited_for() -> None:
    before = procstat.cpu_seconds(os.getpid())
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # A child that spends a few tenths of a second of CPU, then is waited for.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass",
        ],
        check=True,
    )
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (children.ru_utime + children.ru_stime) - (
        children_before.ru_utime + children_before.ru_stime
    )
    assert spent >= 0.3
    # The parent itself only waited; clock ticks round each reading down by up to 1/100 s.
    assert procstat.cpu_seconds(os.getpid()) - before >= spent - 0.03
