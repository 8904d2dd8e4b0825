from __future__ import annotations

from pathlib import Path

import pytest

from asched.cli import build_parser
from asched.explain.cli import parse_pod_ref, run_explain_command


@pytest.mark.parametrize(
    ("ref", "want"),
    [("ns/p", ("ns", "p")), ("p", ("default", "p")), ("a-b/c.d", ("a-b", "c.d"))],
    ids=["namespaced", "bare-name", "dots-and-dashes"],
)
def test_parse_pod_ref(ref: str, want: tuple[str, str]) -> None:
    assert parse_pod_ref(ref) == want


@pytest.mark.parametrize(
    "ref", ["/p", "ns/", "a/b/c", ""], ids=["no-ns", "no-name", "extra", "empty"]
)
def test_parse_pod_ref_rejects(ref: str) -> None:
    with pytest.raises(ValueError, match="NAMESPACE/POD"):
        parse_pod_ref(ref)


def test_parser_wiring() -> None:
    args = build_parser().parse_args(
        ["explain", "ns/p", "--kubeconfig", "k", "--config", "c.yaml", "-o", "json"]
    )
    assert (args.command, args.pod, args.kubeconfig, args.config, args.output) == (
        "explain",
        "ns/p",
        "k",
        Path("c.yaml"),
        "json",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "a/b/c"], "expected NAMESPACE/POD"),
        (["explain", "ns/p", "--config", "/nonexistent/config.yaml"], "nonexistent"),
    ],
    ids=["bad-ref", "missing-config"],
)
def test_usage_errors_exit_2(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Logging is process-wide: configuring it onto pytest's captured stderr would break
    # every later test that logs.
    monkeypatch.setattr("asched.logs.configure_logging", lambda *a: None)
    assert run_explain_command(build_parser().parse_args(argv)) == 2
    assert message in capsys.readouterr().err
