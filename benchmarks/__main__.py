"""``python -m benchmarks``: run a scenario side by side, or print the results table.

    python -m benchmarks run --scenario basic --nodes 1000 --pods 5000 --qps 50 --burst 100
    python -m benchmarks run --scenario gang-oversub --gangs 300 --gang-size 3
    python -m benchmarks report benchmarks/results/*.json

Every run command starts its own loopback cluster, stops by itself (each run has a
timeout) and writes benchmarks/results/<scenario>-...json. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from benchmarks import ceiling
from benchmarks.profiling import hotspots_of
from benchmarks.report import load, markdown
from benchmarks.runner import BenchOptions, run_benchmark
from benchmarks.scenarios import SCENARIOS, Params
from benchmarks.schedulers import ClientLimits, SchedulerSetup
from benchmarks.signals import until_signalled

RESULTS = Path(__file__).resolve().parent / "results"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one scenario with both schedulers")
    run.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    run.add_argument("--nodes", type=int, default=1000)
    run.add_argument("--pods", type=int, default=5000)
    run.add_argument("--gangs", type=int, default=1000)
    run.add_argument("--gang-size", type=int, default=3)
    run.add_argument(
        "--oversubscribe",
        type=float,
        default=1.5,
        help="gang-oversub: requested / available CPU (nodes are derived)",
    )
    run.add_argument(
        "--qps",
        type=float,
        default=50.0,
        help="clientConnection.qps of both schedulers (kube-scheduler default 50)",
    )
    run.add_argument("--burst", type=int, default=100)
    run.add_argument(
        "--percentage-of-nodes-to-score",
        type=int,
        default=0,
        help="both schedulers; 0 is the adaptive default",
    )
    run.add_argument(
        "--spread-defaulting",
        choices=("System", "List"),
        default="System",
        help="PodTopologySpread defaultingType of both; List (no default constraints) makes "
        "plain pods signable, so both schedulers batch them (OpportunisticBatching)",
    )
    run.add_argument("--runs", type=int, default=1, help="repetitions (docs use 3, medians)")
    run.add_argument(
        "--schedulers",
        default="",
        help="comma list of asched, kube-scheduler, bare-bind (default: every "
        "scheduler the scenario supports; bare-bind for basic)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=0.0,
        help="seconds per run (0: 120 + 3 s per 100 pods at the qps)",
    )
    run.add_argument(
        "--permit-wait", type=int, default=60, help="gang: Coscheduling permitWaitingTimeSeconds"
    )
    run.add_argument(
        "--podgroup-backoff", type=int, default=10, help="gang: Coscheduling podGroupBackoffSeconds"
    )
    run.add_argument(
        "--asched-ref",
        default="worktree",
        help="run asched from `git archive REF asched`, or with REF 'worktree' "
        "(the default) from a copy of the checkout's asched/ taken at the start (a "
        "frozen version while others edit the tree). Either copy is byte-compiled, "
        "as an installed asched is; running the checkout in place under "
        "PYTHONDONTWRITEBYTECODE would count compiling its sources in every run's CPU",
    )
    run.add_argument(
        "--py-spy",
        type=Path,
        default=None,
        help="path of a py-spy executable: profile asched during its runs",
    )
    run.add_argument(
        "--inspector-clients",
        type=int,
        default=0,
        help="asched: hold N inspector event streams open during each run (its cost)",
    )
    run.add_argument("--out", type=Path, default=RESULTS)
    report = sub.add_parser("report", help="print the Markdown results table")
    report.add_argument("files", nargs="+", type=Path)
    spots = sub.add_parser("hotspots", help="summarize a py-spy profile of asched")
    spots.add_argument("file", type=Path)
    spots.add_argument("--top", type=int, default=25)
    return parser


def _schedulers(args: argparse.Namespace, supported: Sequence[str]) -> tuple[str, ...]:
    if args.schedulers:
        chosen = tuple(s.strip() for s in args.schedulers.split(",") if s.strip())
        unknown = [s for s in chosen if s not in (*supported, ceiling.NAME)]
        if unknown:
            raise SystemExit(f"scenario {args.scenario} cannot run {', '.join(unknown)}")
        return chosen
    extra = (ceiling.NAME,) if args.scenario == "basic" else ()
    return (*supported, *extra)


def run_command(args: argparse.Namespace) -> int:
    params = Params(
        nodes=args.nodes,
        pods=args.pods,
        gangs=args.gangs,
        gang_size=args.gang_size,
        oversubscribe=args.oversubscribe,
    )
    scenario = SCENARIOS[args.scenario](params)
    setup = SchedulerSetup(
        ClientLimits(args.qps, args.burst),
        args.percentage_of_nodes_to_score,
        gang=scenario.gang,
        native_gang=scenario.native_gang,
        permit_waiting_seconds=args.permit_wait,
        podgroup_backoff_seconds=args.podgroup_backoff,
        spread_defaulting=args.spread_defaulting,
    )
    timeout = args.timeout or 120 + 3 * len(scenario.pods) / min(args.qps, 2000)
    opts = BenchOptions(
        scenario,
        setup,
        args.runs,
        _schedulers(args, [k.value for k in scenario.schedulers]),
        timeout,
        args.out,
        asched_ref=args.asched_ref,
        py_spy=args.py_spy,
        inspector_clients=args.inspector_clients,
    )
    document = anyio.run(
        until_signalled,
        functools.partial(run_benchmark, opts),
        backend_options={"use_uvloop": True},
    )
    if document is None:
        print("benchmark stopped by a signal; its cluster and schedulers were stopped")
        return 143
    print(
        f"\n{scenario.describe}; qps {args.qps:g} burst {args.burst}; results: {document['path']}\n"
    )
    print(markdown([document]))
    for name, value in document["summary"]["ratios"].items():
        print(f"{name}: {value:.2f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from asched.logs import configure_logging

    configure_logging("info", "text")
    args = build_parser().parse_args(argv)
    if args.command == "run":
        return run_command(args)
    if args.command == "hotspots":
        print(hotspots_of(args.file, args.top))
        return 0
    print(markdown(load(args.files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
