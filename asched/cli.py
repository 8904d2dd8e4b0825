"""The ``asched`` command: one entry point, one subcommand per job.

Each subcommand lives beside the code it drives and registers itself here through an
``add_*_parser(subparsers)`` / ``run_*_command(args)`` pair, so this module stays a table.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from asched.base.errors import StartupError
from asched.demo.cli import add_demo_parser, run_demo_command
from asched.explain.cli import add_explain_parser, run_explain_command
from asched.localcluster.cli import add_cluster_parser, run_cluster_command


def add_run_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run",
        help="run the scheduler against a cluster",
        description="Schedule pods whose schedulerName matches a profile of --config.",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="KubeSchedulerConfiguration file (default: one default-scheduler "
        "profile with kube-scheduler's default plugins)",
    )
    p.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig (default: clientConnection.kubeconfig, then in-cluster, "
        "then ~/.kube/config)",
    )
    p.add_argument(
        "--bind-address", default="0.0.0.0", help="address of /healthz, /readyz and /metrics"
    )
    p.add_argument(
        "--secure-port",
        type=int,
        default=10259,
        help="port of /healthz, /readyz and /metrics (plain HTTP; 0 picks one)",
    )
    le = p.add_mutually_exclusive_group()
    le.add_argument("--leader-elect", dest="leader_elect", action="store_true", default=None)
    le.add_argument("--no-leader-elect", dest="leader_elect", action="store_false")
    p.add_argument(
        "--api-server-wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long to wait for the API server's first answer before exiting "
        "(default 10, as kube-controller-manager)",
    )
    p.add_argument(
        "--no-columnar",
        dest="columnar",
        action="store_false",
        help="run every Filter and Score plugin node by node instead of over node columns "
        "(same decisions, slower; for comparing the two)",
    )
    p.add_argument(
        "--report-stalls-ms",
        type=float,
        default=float(os.environ.get("ASCHED_REPORT_STALLS_MS", "0") or 0),
        metavar="MS",
        help="log the stack of whatever holds the event loop longer than MS milliseconds "
        "(a diagnostic thread; default off, or $ASCHED_REPORT_STALLS_MS)",
    )
    p.add_argument("--lease-namespace", default=None)
    p.add_argument("--lease-name", default=None)
    p.add_argument("--log-level", default="info")
    p.add_argument("--log-format", choices=("json", "text"), default="json")


def run_run_command(args: argparse.Namespace) -> int:
    import anyio

    from asched.app import RunOptions, run
    from asched.logs import configure_logging

    configure_logging(args.log_level, args.log_format)
    opts = RunOptions(
        config=args.config,
        kubeconfig=args.kubeconfig,
        bind_address=args.bind_address,
        secure_port=args.secure_port,
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        columnar=args.columnar,
        report_stalls_ms=args.report_stalls_ms,
    )
    if args.api_server_wait is not None:
        opts.api_server_wait = args.api_server_wait
    try:
        return anyio.run(run, opts, backend_options=_backend_options())
    except StartupError as exc:
        report_startup_error("asched", exc)
        return 2


def report_startup_error(prog: str, exc: StartupError) -> None:
    """One line per problem on stderr, each naming its file or field; no traceback."""
    for line in exc.lines():
        print(f"{prog}: {line}", file=sys.stderr)


def _backend_options() -> dict[str, object]:
    """uvloop when it is installed: a faster event loop for the same code."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="asched", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_run_parser(subparsers)
    add_cluster_parser(subparsers)
    add_demo_parser(subparsers)
    add_explain_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "run":
        return run_run_command(args)
    if args.command == "cluster":
        return run_cluster_command(args)
    if args.command == "demo":
        return run_demo_command(args)
    if args.command == "explain":
        return run_explain_command(args)
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
