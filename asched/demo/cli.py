"""``asched demo``: see asched schedule a small mixed cluster in under a minute.

Starts a throw-away control plane (needs the binaries from hack/controlplane/build.sh),
creates kwok nodes, runs two asched schedulers in this process (the seed article's
configuration as ``custom-scheduler``; default plugins plus gang scheduling as
``gang-scheduler``), submits a workload, prints where each pod went and why, then
removes everything. --keep leaves it all running until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

SEED_CONFIG = "seed-config.yaml"
GANG_CONFIG = "gang-config.yaml"
DATA = "asched.demo.data"


def _node_count(text: str) -> int:
    from asched.demo.topology import MIN_NODES

    n = int(text)
    if not MIN_NODES <= n <= 1000:
        raise argparse.ArgumentTypeError(f"must be between {MIN_NODES} and 1000")
    return n


def add_demo_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="run asched on a throw-away local cluster and show what it does",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--nodes", type=_node_count, default=8, help="how many kwok nodes (default 8, at least 4)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the cluster and schedulers running until Ctrl-C"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=90.0,
        help="seconds to wait for the workload to settle (default 90)",
    )
    parser.add_argument(
        "--log-level", default="warning", help="the schedulers' log level (logs go to stderr)"
    )
    return parser


def run_demo_command(args: argparse.Namespace) -> int:
    from importlib import resources
    from pathlib import Path

    import anyio

    from asched.app import build_registry
    from asched.config import load_config
    from asched.demo.instances import InProcessScheduler
    from asched.demo.runner import DemoOptions, run_demo
    from asched.demo.topology import demo_nodes
    from asched.demo.workload import demo_workload
    from asched.logs import configure_logging

    configure_logging(args.log_level, "text")
    registry = build_registry()
    data = resources.files(DATA)
    seed = load_config(data.joinpath(SEED_CONFIG).read_text(), registry, filename=SEED_CONFIG)
    gang = load_config(data.joinpath(GANG_CONFIG).read_text(), registry, filename=GANG_CONFIG)

    def seed_scheduler(kubeconfig: Path) -> InProcessScheduler:
        return InProcessScheduler("seed config", seed, registry, kubeconfig)

    def gang_scheduler(kubeconfig: Path) -> InProcessScheduler:
        return InProcessScheduler("default plugins + Coscheduling", gang, registry, kubeconfig)

    opts = DemoOptions(
        nodes=args.nodes,
        keep=args.keep,
        settle_timeout=args.timeout,
        explain_config=str(data.joinpath(GANG_CONFIG)),
    )

    def say(line: str) -> None:
        print(line, flush=True)

    def complain(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    return anyio.run(
        run_demo,
        opts,
        [seed_scheduler, gang_scheduler],
        demo_workload(demo_nodes(args.nodes)),
        say,
        complain,
        backend_options=_backend_options(),
    )


def _backend_options() -> dict[str, object]:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


__all__ = ["add_demo_parser", "run_demo_command"]
