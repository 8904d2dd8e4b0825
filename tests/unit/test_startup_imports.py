"""What a start-up imports is CPU every scheduler start pays (and every benchmark run
measures), and resident memory the process keeps: packages only some clusters need are
imported when first used, and structlog's optional rich is hidden (asched/__init__.py)."""

from __future__ import annotations

import subprocess
import sys

# Imported by the start-up path below only if a module imports it at its top.
DEFERRED = ("cel", "typer", "prompt_toolkit", "rich", "pygments", "cryptography")


def test_starting_the_scheduler_does_not_import_cel() -> None:
    code = (
        "import sys\n"
        "import asched.cli, asched.app\n"
        "asched.app.build_registry()\n"
        f"print(','.join(m for m in {DEFERRED!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_rich_stays_importable_after_asched_hid_it_from_structlog() -> None:
    code = "import asched.app, structlog.dev, rich.console; print(structlog.dev.rich)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "None"


def test_a_device_selector_still_compiles_on_first_use() -> None:
    from asched.plugins.dynamicresources.cel import compile_expression

    compiled = compile_expression('device.driver == "gpu.example.com"')
    assert not compiled.error
    assert compiled.program is not None
