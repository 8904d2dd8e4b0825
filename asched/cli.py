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
from typing import TYPE_CHECKING

from asched.base import featuregates
from asched.base.errors import StartupError
from asched.demo.cli import add_demo_parser, run_demo_command
from asched.explain.cli import add_explain_parser, run_explain_command
from asched.inspect import add_inspect_parser, positive_int, run_inspect_command
from asched.localcluster.cli import add_cluster_parser, run_cluster_command

if TYPE_CHECKING:
    from asched.server.options import ServingOptions


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
    add_serving_arguments(p)
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
        "--feature-gates",
        type=_feature_gates,
        default=featuregates.DEFAULTS,
        metavar="NAME=BOOL,...",
        help="kube-scheduler gates; asched switches "
        + ", ".join(f"{k} (default {str(on).lower()})" for k, on in _switch_defaults())
        + "; it accepts the other gates of kube-scheduler's that it knows at the values it "
        "honours, and refuses the other values saying why",
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
    add_inspector_arguments(p)
    p.add_argument("--log-level", default="info")
    p.add_argument("--log-format", choices=("json", "text"), default="json")


def _switch_defaults() -> list[tuple[str, bool]]:
    return [(name, featuregates.DEFAULTS[name]) for name in featuregates.SWITCHES]


def _feature_gates(value: str) -> dict[str, bool]:
    try:
        return featuregates.parse(value)
    except featuregates.FeatureGateError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_inspector_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the live inspector at /inspector/ (docs/operations.md)")
    g.add_argument(
        "--no-inspector",
        dest="inspector",
        action="store_false",
        help="do not serve /inspector/ nor collect decisions for it",
    )
    g.add_argument(
        "--inspector-decisions",
        type=positive_int,
        default=200,
        metavar="N",
        help="how many recent decisions the inspector keeps (default 200)",
    )


def run_run_command(args: argparse.Namespace) -> int:
    import anyio

    from asched.app import RunOptions, run
    from asched.explain.runner import explain_as_dict
    from asched.logs import configure_logging

    configure_logging(args.log_level, args.log_format)
    featuregates.set_current(args.feature_gates)
    opts = RunOptions(
        config=args.config,
        kubeconfig=args.kubeconfig,
        serving=serving_options(args),
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        columnar=args.columnar,
        opportunistic_batching=args.feature_gates["OpportunisticBatching"],
        report_stalls_ms=args.report_stalls_ms,
        inspector=args.inspector,
        inspector_decisions=args.inspector_decisions,
        explain=explain_as_dict,
    )
    if args.api_server_wait is not None:
        opts.api_server_wait = args.api_server_wait
    try:
        return anyio.run(run, opts, backend_options=_backend_options())
    except StartupError as exc:
        report_startup_error("asched", exc)
        return 2


def add_serving_arguments(p: argparse.ArgumentParser) -> None:
    """kube-scheduler's secure-serving, delegated authn and authz flags (the subset asched
    serves); see docs/operations.md "The ops port"."""
    from asched.server import authn, authz

    g = p.add_argument_group("serving of /healthz, /livez, /readyz and /metrics")
    g.add_argument(
        "--bind-address",
        default=None,
        help="address to serve on (default 0.0.0.0; 127.0.0.1 with --insecure-serving)",
    )
    g.add_argument(
        "--secure-port",
        type=int,
        default=10259,
        help="port to serve HTTPS on (0 picks a free one; default 10259)",
    )
    g.add_argument(
        "--tls-cert-file",
        type=Path,
        default=None,
        help="PEM serving certificate (then its chain); re-read when it changes. "
        "Default: a self-signed certificate generated in memory",
    )
    g.add_argument(
        "--tls-private-key-file",
        type=Path,
        default=None,
        help="PEM private key of --tls-cert-file (unencrypted); re-read when it changes",
    )
    g.add_argument(
        "--client-ca-file",
        type=Path,
        default=None,
        help="PEM CA bundle: clients may authenticate with a certificate it signed "
        "(user = CommonName, groups = Organizations); re-read when it changes",
    )
    g.add_argument(
        "--authorization-always-allow-paths",
        type=_paths,
        default=authz.DEFAULT_ALWAYS_ALLOW_PATHS,
        metavar="PATHS",
        help="comma-separated paths served without authentication or authorization "
        "(a trailing * matches a prefix; default /healthz,/readyz,/livez)",
    )
    g.add_argument(
        "--authentication-token-webhook-cache-ttl",
        type=duration,
        default=authn.DEFAULT_TTL,
        metavar="DURATION",
        help="how long TokenReview answers are cached (default 10s)",
    )
    g.add_argument(
        "--authorization-webhook-cache-authorized-ttl",
        type=duration,
        default=authz.DEFAULT_ALLOWED_TTL,
        metavar="DURATION",
        help="how long allowed SubjectAccessReview answers are cached (default 10s)",
    )
    g.add_argument(
        "--authorization-webhook-cache-unauthorized-ttl",
        type=duration,
        default=authz.DEFAULT_DENIED_TTL,
        metavar="DURATION",
        help="how long denied SubjectAccessReview answers are cached (default 10s)",
    )
    g.add_argument(
        "--insecure-serving",
        action="store_true",
        help="plain HTTP, no authentication, loopback addresses only: for tests and the demo",
    )


def serving_options(args: argparse.Namespace) -> ServingOptions:
    from asched.server.options import ServingOptions

    return ServingOptions(
        bind_address=args.bind_address,
        secure_port=args.secure_port,
        insecure_serving=args.insecure_serving,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        client_ca_file=args.client_ca_file,
        always_allow_paths=args.authorization_always_allow_paths,
        authn_cache_ttl=args.authentication_token_webhook_cache_ttl,
        authz_allowed_ttl=args.authorization_webhook_cache_authorized_ttl,
        authz_denied_ttl=args.authorization_webhook_cache_unauthorized_ttl,
    )


def _paths(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


_UNITS = (("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0))


def duration(value: str) -> float:
    """Seconds from a Go-style duration as kube-scheduler's flags take it ("10s", "500ms",
    "1m", "1h"; a bare number is seconds)."""
    text = value.strip()
    for unit, scale in _UNITS:
        if text.endswith(unit):
            number = text[: -len(unit)]
            # "10ms" also ends with "s"; the longer unit is tried first.
            try:
                seconds = float(number) * scale
            except ValueError:
                continue
            break
    else:
        try:
            seconds = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{value!r} is not a duration (like 10s, 500ms, 1m)"
            ) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"{value!r}: a duration must not be negative")
    return seconds


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
    add_inspect_parser(subparsers)
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
    if args.command == "inspect":
        return run_inspect_command(args)
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
