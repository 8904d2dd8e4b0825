"""`asched inspect`: schedule for the local demo cluster and open the live inspector.

It runs asched (`asched run`'s wiring, with the inspector) against the cluster that
`asched cluster up` started, as that cluster's scheduler identity, serving the ops port
as plain HTTP on loopback (`--insecure-serving`: only this machine can connect), and
opens the default browser at /inspector/. Against a real cluster, run `asched run` and
reach /inspector/ through its HTTPS port instead (docs/operations.md).
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path
from typing import Any

DEFAULT_PORT = 10260


def positive_int(value: str) -> int:
    """argparse type of --inspector-decisions (here and in `asched run`)."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive whole number")
    return n


def add_inspect_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "inspect",
        help="schedule for the local cluster and open the live inspector in a browser",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", type=Path, default=None, help="KubeSchedulerConfiguration file")
    p.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="the local cluster's state directory (default: as `asched cluster`)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="loopback port (default 10260)")
    p.add_argument("--no-browser", action="store_true", help="print the URL only")
    p.add_argument("--inspector-decisions", type=positive_int, default=200, metavar="N")
    p.add_argument("--log-level", default="warning")
    return p


def run_inspect_command(args: argparse.Namespace) -> int:
    import anyio
    import anyio.to_thread

    from asched.app import RunOptions, run
    from asched.base.errors import StartupError
    from asched.explain.runner import explain_as_dict
    from asched.localcluster.state import default_state_dir, read_state
    from asched.logs import configure_logging
    from asched.server.options import ServingOptions

    state_dir = args.state_dir or default_state_dir()
    state = read_state(state_dir)
    if state is None or not state.scheduler_kubeconfig:
        print(
            f"asched inspect: no local cluster in {state_dir}; start one with "
            "`asched cluster up` (or run `asched run` against yours)",
            file=sys.stderr,
        )
        return 2
    # Only once asched will run: configuring is process-wide (and caches loggers).
    configure_logging(args.log_level, "text")

    async def opened(url: str) -> None:
        print(f"asched inspector: {url}", flush=True)
        if not args.no_browser:
            # webbrowser may start a process and wait for it: never on the event loop.
            await anyio.to_thread.run_sync(webbrowser.open, url)

    opts = RunOptions(
        config=args.config,
        kubeconfig=state.scheduler_kubeconfig,
        serving=ServingOptions(secure_port=args.port, insecure_serving=True),
        leader_elect=False,
        inspector_decisions=args.inspector_decisions,
        explain=explain_as_dict,
        on_serving=opened,
    )
    try:
        return anyio.run(run, opts)
    except StartupError as exc:
        for line in exc.lines():
            print(f"asched inspect: {line}", file=sys.stderr)
        return 2
