"""`asched inspect` and the run flags of the inspector."""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.cli import build_parser, main


def test_inspect_without_a_local_cluster_says_how_to_start_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Logging is process-wide: a test must not configure (and cache) it for the others.
    monkeypatch.setattr("asched.logs.configure_logging", lambda *a: None)
    assert main(["inspect", "--state-dir", str(tmp_path), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"asched inspect: no local cluster in {tmp_path}")
    assert "asched cluster up" in err


@pytest.mark.parametrize(
    ("argv", "enabled", "decisions"),
    [
        ([], True, 200),
        (["--no-inspector"], False, 200),
        (["--inspector-decisions", "50"], True, 50),
    ],
)
def test_run_flags(argv: list[str], enabled: bool, decisions: int) -> None:
    args = build_parser().parse_args(["run", *argv])
    assert (args.inspector, args.inspector_decisions) == (enabled, decisions)


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_the_ring_size_must_be_positive(value: str) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--inspector-decisions", value])
