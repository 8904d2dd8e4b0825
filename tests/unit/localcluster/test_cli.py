"""The cluster CLI's paths that start nothing: refusing foreign directories, no-op down."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from asched.localcluster.cli import add_cluster_parser, run_cluster_command


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    add_cluster_parser(parser.add_subparsers(dest="command"))
    return run_cluster_command(parser.parse_args(["cluster", *argv]))


def test_up_refuses_a_directory_it_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "precious").write_text("x")
    assert run("up", "--dir", str(tmp_path)) == 1
    assert "no cluster state" in capsys.readouterr().out
    assert (tmp_path / "cluster" / "precious").read_text() == "x"


def test_down_without_cluster_is_a_no_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("down", "--dir", str(tmp_path / "absent")) == 0
    assert "no cluster" in capsys.readouterr().out


def test_down_keeps_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "cluster").mkdir()
    (tmp_path / "mine").write_text("x")
    assert run("down", "--dir", str(tmp_path)) == 0
    assert (tmp_path / "cluster").is_dir()
    assert (tmp_path / "mine").is_file()


def test_status_without_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("status", "--dir", str(tmp_path)) == 1
    assert "running: no" in capsys.readouterr().out


def test_state_dir_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASCHED_STATE_DIR", str(tmp_path / "from-env"))
    assert run("status") == 1
    assert str(tmp_path / "from-env") in capsys.readouterr().out
