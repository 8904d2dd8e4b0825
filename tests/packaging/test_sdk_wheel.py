"""The plugin SDK as a plugin author gets it: from wheels, in a clean virtualenv.

Builds the asched wheel and the asched-policies wheel, installs only those (with their
declared dependencies and the policies' `test` extra, from the package index) into a
fresh venv, and runs a copy of examples/policies/tests placed outside the checkout with
that venv's python. So the tests can import nothing of the checkout: a test that reaches
for asched's `tests` package, or a module the wheel forgot (asched.testing, py.typed),
fails here.

Needs the package index (pip's own cache makes later runs fast) and about a minute.
The sources are copied before building, because setuptools writes build/ and
*.egg-info next to the sources it builds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "examples" / "policies"
_JUNK = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".*_cache")

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(290)]


def _run(*cmd: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`cmd` in `cwd`, never the checkout: `python -c` would import asched from there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_NO_CACHE"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def _copy_sources(dest: Path) -> tuple[Path, Path]:
    asched = dest / "asched-src"
    asched.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, asched / name)
    shutil.copytree(ROOT / "asched", asched / "asched", ignore=_JUNK)
    policies = dest / "policies-src"
    policies.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(POLICIES / name, policies / name)
    shutil.copytree(POLICIES / "src", policies / "src", ignore=_JUNK)
    return asched, policies


def test_policies_tests_pass_against_the_installed_wheels(tmp_path: Path) -> None:
    asched_src, policies_src = _copy_sources(tmp_path)
    wheels = tmp_path / "wheels"
    _ok(_run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels,
             asched_src, policies_src, cwd=tmp_path))  # fmt: skip
    asched_whl = next(wheels.glob("asched-*.whl"))
    policies_whl = next(wheels.glob("asched_policies-*.whl"))

    venv = tmp_path / "venv"
    _ok(_run(sys.executable, "-m", "venv", venv, cwd=tmp_path))
    python = venv / "bin" / "python"
    install = ("-m", "pip", "install", "-q", asched_whl, f"{policies_whl}[test]")
    _ok(_run(python, *install, cwd=tmp_path))
    probe = "import asched.testing as t, asched_policies as p; print(t.__file__, p.__file__)"
    for where in _ok(_run(python, "-c", probe, cwd=tmp_path)).split():
        assert Path(where).is_relative_to(venv), where

    # The package's tests and its pytest settings, nothing else of the checkout.
    run_dir = tmp_path / "run"
    shutil.copytree(POLICIES / "tests", run_dir / "tests", ignore=_JUNK)
    shutil.copy2(POLICIES / "pyproject.toml", run_dir / "pyproject.toml")
    proc = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=run_dir)
    out = _ok(proc)  # exit 5 (nothing collected) fails here too
    passed = re.search(r"(\d+) passed", out)
    assert passed is not None, out
    assert int(passed.group(1)) >= 100, out
    assert not re.search(r"\d+ (skipped|xfailed|deselected)", out), out
