"""Logging keeps working when sys.stderr is swapped after configuration."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator

import pytest
import structlog

from asched.logs import configure_logging


@pytest.fixture
def restore_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_writes_to_the_current_stderr_not_the_one_at_configure_time(
    fmt: str, monkeypatch: pytest.MonkeyPatch, restore_logging: None
) -> None:
    first = io.TextIOWrapper(io.BytesIO())
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging("info", fmt)
    first.close()  # what a test runner does with its capture after a test
    second = io.TextIOWrapper(io.BytesIO(), write_through=True)
    monkeypatch.setattr(sys, "stderr", second)
    structlog.get_logger("t").info("pod_bound", pod="ns/p", node="n1")
    second.flush()
    out = second.buffer.getvalue().decode()  # type: ignore[attr-defined]
    assert "pod_bound" in out
    if fmt == "json":
        line = json.loads(out.strip().splitlines()[-1])
        assert (line["event"], line["pod"], line["node"]) == ("pod_bound", "ns/p", "n1")
