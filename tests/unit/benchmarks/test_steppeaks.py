"""benchmarks/steppeaks.py: the step that made a transient peak is the one written down.

It patches asyncio globally, so each case runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import orjson

from benchmarks.steppeaks import summary

PROGRAM = textwrap.dedent(
    """
    import asyncio, sys, tracemalloc
    from pathlib import Path
    from benchmarks.steppeaks import StepPeaks

    tracemalloc.start(1)
    StepPeaks(Path(sys.argv[1]), 2 << 20).install()

    async def spike():
        await asyncio.sleep(0)
        junk = [str(i) * 4 for i in range(60_000)]  # several MiB, freed in the same step
        del junk
        await asyncio.sleep(0)

    async def quiet():
        for _ in range(3):
            await asyncio.sleep(0)

    async def main():
        await asyncio.gather(spike(), quiet())

    asyncio.run(main())
    """
)


def test_the_step_that_spiked_is_recorded_with_its_coroutine(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path)], check=True, cwd=root, timeout=60)
    entries = [orjson.loads(line) for line in (tmp_path / "steps.jsonl").read_bytes().splitlines()]
    assert [e["coro"] for e in entries] == ["spike"]
    (only,) = entries
    assert only["peak"] - only["before"] >= 2 << 20
    assert only["after"] - only["before"] < 1 << 20  # freed within the step
    assert only["chain"][0].endswith(" spike")
    lines = summary(tmp_path / "steps.jsonl")
    assert len(lines) == 2
    assert lines[1].split()[0] == "1"
    assert "spike" in lines[1]
