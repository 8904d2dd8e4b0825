from __future__ import annotations

import pytest

from asched.cli import build_parser


def test_defaults() -> None:
    args = build_parser().parse_args(["demo"])
    assert (args.nodes, args.keep, args.timeout, args.log_level) == (8, False, 90.0, "warning")


@pytest.mark.parametrize(
    ("argv", "nodes", "keep"),
    [(["demo", "--nodes", "4", "--keep"], 4, True), (["demo", "--nodes", "50"], 50, False)],
    ids=["minimum-kept", "bigger"],
)
def test_options(argv: list[str], nodes: int, keep: bool) -> None:
    args = build_parser().parse_args(argv)
    assert (args.nodes, args.keep) == (nodes, keep)


@pytest.mark.parametrize("nodes", ["3", "0", "many"], ids=["too-few", "zero", "not-a-number"])
def test_bad_node_counts_are_usage_errors(nodes: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["demo", "--nodes", nodes])
    assert exc.value.code == 2
    assert "--nodes" in capsys.readouterr().err
