from __future__ import annotations

from pathlib import Path

from asched.demo.runner import DemoOptions, run_demo
from asched.demo.workload import demo_workload


async def test_missing_binaries_exit_1_with_the_build_command(tmp_path: Path) -> None:
    said: list[str] = []
    complained: list[str] = []
    code = await run_demo(
        DemoOptions(bin_dir=tmp_path), [], demo_workload(), said.append, complained.append
    )
    assert code == 1
    assert len(complained) == 1
    assert "hack/controlplane/build.sh" in complained[0]
    assert not any("Stopped" in line for line in said)  # nothing was started
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240 - a test's tmp dir
