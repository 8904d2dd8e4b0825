"""``asched explain NAMESPACE/POD``: why a pod is pending, and where asched would put it.

Runs one dry scheduling cycle of the pod against the live cluster with the profile its
schedulerName selects in --config (default: kube-scheduler's default profile) and prints,
per node, which Filter plugin rejects it and why, then each Score plugin's scores and the
node asched would pick. Read-only: it never binds, records events or writes status.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

OUTPUTS = ("text", "json")


def add_explain_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "explain",
        help="explain where a pod would be scheduled and why not elsewhere (dry run)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("pod", metavar="NAMESPACE/POD", help="the pod to explain")
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig (default: in-cluster, then $KUBECONFIG or ~/.kube/config)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the scheduler's KubeSchedulerConfiguration (default: one "
        "default-scheduler profile with kube-scheduler's default plugins)",
    )
    parser.add_argument("-o", "--output", choices=OUTPUTS, default="text")
    parser.add_argument("--log-level", default="warning")
    return parser


def parse_pod_ref(ref: str) -> tuple[str, str]:
    """``NAMESPACE/POD`` -> (namespace, name); a bare name means namespace "default"."""
    namespace, sep, name = ref.partition("/")
    if not sep:
        namespace, name = "default", ref
    if not namespace or not name or "/" in name:
        raise ValueError(f"expected NAMESPACE/POD, got {ref!r}")
    return namespace, name


def run_explain_command(args: argparse.Namespace) -> int:
    import anyio

    from asched.app import build_registry, load
    from asched.base.errors import StartupError
    from asched.client.protocol import ApiError, TransportError
    from asched.explain.render import render_json, render_text
    from asched.explain.runner import ExplainError
    from asched.logs import configure_logging

    configure_logging(args.log_level, "text")
    try:
        namespace, name = parse_pod_ref(args.pod)
    except ValueError as exc:
        print(f"asched explain: {exc}", file=sys.stderr)
        return 2
    registry = build_registry()
    try:
        config = load(args.config, registry)
        expl = anyio.run(_explain, args.kubeconfig, namespace, name, config, registry)
    except StartupError as exc:
        # A config, kubeconfig or unreachable API server: the user's to fix, one line each.
        for line in exc.lines():
            print(f"asched explain: {line}", file=sys.stderr)
        return 2
    except ExplainError as exc:
        print(f"asched explain: {exc}", file=sys.stderr)
        return 1
    except (ApiError, TransportError) as exc:
        print(f"asched explain: API request failed: {exc}", file=sys.stderr)
        return 1
    if args.output == "json":
        print(render_json(expl))
    else:
        print("\n".join(render_text(expl)))
    return 0


async def _explain(
    kubeconfig: str | None, namespace: str, name: str, config: Any, registry: Any
) -> Any:
    from asched.base.clock import RealClock
    from asched.client.kubeconfig import load_connection
    from asched.client.probe import wait_for_api_server
    from asched.client.rest import RestClient
    from asched.explain.runner import explain_pod

    connection = await load_connection(kubeconfig)
    cc = config.client_connection
    async with RestClient(
        connection, qps=cc.qps, burst=cc.burst, content_type=cc.content_type
    ) as client:
        # One try, no waiting: someone at a terminal wants the answer, not a retry loop.
        await wait_for_api_server(client, connection.host, RealClock(), wait=0.0)
        return await explain_pod(client, namespace, name, config, registry)


__all__ = ["add_explain_parser", "parse_pod_ref", "run_explain_command"]
