"""docs/plugins.md's example plugin and its tests, run as they stand in the page.

Every ```python block of the page whose first line is `# <name>.py` is written to that
file, and pytest runs the result in a fresh process, outside the checkout, so the example
can import only the installed asched (as a plugin author's package would).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"
BLOCK = re.compile(r"^```python\n# (?P<name>[\w]+\.py)\n(?P<body>.*?)^```$", re.M | re.S)


def test_the_example_plugin_and_its_tests_pass(tmp_path: Path) -> None:
    files = {m["name"]: m["body"] for m in BLOCK.finditer(DOC.read_text())}
    assert set(files) == {"zone_preference.py", "test_zone_preference.py"}
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error",
         "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function",
         "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed" in proc.stdout, proc.stdout
