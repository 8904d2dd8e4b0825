"""``python -m benchmarks.scheduler_perf``: kube-scheduler's own benchmark workloads.

    python -m benchmarks.scheduler_perf list
    python -m benchmarks.scheduler_perf run --workload SchedulingBasic/500Nodes --runs 3
    python -m benchmarks.scheduler_perf run --workload TopologySpreading/5000Nodes \\
        --set initNodes=1000 --set initPods=1000
    python -m benchmarks.scheduler_perf report benchmarks/results/perf-*.json

The workloads are read unmodified from test/integration/scheduler_perf of
k8s.io/kubernetes in the Go module cache (the version under test, v1.37.2). `--set`
replaces a param of the workload (to fit this machine) and is printed with the results.
See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import orjson

from benchmarks.scheduler_perf.config import (
    ConfigError,
    find_config_files,
    find_workload,
    load_file,
)
from benchmarks.scheduler_perf.params import parse_overrides, resolve
from benchmarks.scheduler_perf.report import markdown
from benchmarks.scheduler_perf.run import K8S_VERSION, PerfOptions, perf_dir, run_workload
from benchmarks.schedulers import ClientLimits, Kind
from benchmarks.signals import until_signalled

RESULTS = Path(__file__).resolve().parents[1] / "results"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scheduler_perf",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--k8s-version", default=K8S_VERSION)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="every test case and workload, and whether it can run")
    run = sub.add_parser("run", help="run one workload with both schedulers")
    run.add_argument("--workload", required=True, help="TestCase/Workload (dir/ prefix optional)")
    run.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE")
    run.add_argument("--runs", type=int, default=1)
    run.add_argument(
        "--schedulers", default="asched,kube-scheduler", help="comma list: asched,kube-scheduler"
    )
    run.add_argument(
        "--qps", type=float, default=5000.0, help="both schedulers (scheduler_perf uses 5000)"
    )
    run.add_argument("--burst", type=int, default=5000)
    run.add_argument("--timeout", type=float, default=600.0, help="per wait, as upstream")
    run.add_argument(
        "--backlog",
        action="store_true",
        help="create the measured pods while the scheduler is stopped, then restart it "
        "(the side-by-side runner's method); by default they are created while it runs, as "
        "upstream does, and this process's creation rate can bound the measured rate",
    )
    run.add_argument(
        "--py-spy", type=Path, default=None, help="path of py-spy: profile asched's runs"
    )
    run.add_argument("--out", type=Path, default=RESULTS)
    report = sub.add_parser("report", help="print the Markdown table of result files")
    report.add_argument("files", nargs="+", type=Path)
    return parser


def list_command(version: str) -> int:
    root = perf_dir(version)
    for path in find_config_files(root):
        rel = path.parent.relative_to(root).as_posix()
        try:
            cases = load_file(path)
        except ConfigError as err:
            print(f"{rel}: {err}")
            continue
        for case in cases:
            status = f"  REFUSED: {case.refusal}" if case.refusal else ""
            if case.scheduler_config_path is not None:
                status = "  REFUSED: schedulerConfigPath is not supported"
            print(f"{rel}/{case.name}{status}")
            for w in case.workloads:
                print(f"    {w.name}  threshold={w.threshold.value:g}  labels={','.join(w.labels)}")
    return 0


def run_command(args: argparse.Namespace) -> int:
    try:
        case, workload = find_workload(perf_dir(args.k8s_version), args.workload)
        overrides = parse_overrides(args.set)
        ops = resolve(case, workload, overrides)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    opts = PerfOptions(
        case=case,
        workload=workload,
        ops=tuple(ops),
        overrides=overrides,
        runs=args.runs,
        schedulers=tuple(Kind(s.strip()) for s in args.schedulers.split(",") if s.strip()),
        limits=ClientLimits(args.qps, args.burst),
        out_dir=args.out,
        wait_timeout=args.timeout,
        backlog=args.backlog,
        py_spy=args.py_spy,
    )
    document = anyio.run(
        until_signalled, functools.partial(run_workload, opts), backend_options={"use_uvloop": True}
    )
    if document is None:
        print("stopped by a signal; its cluster and schedulers were stopped")
        return 143
    print(f"results: {document['path']}\n")
    print(markdown([document]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from asched.logs import configure_logging

    configure_logging("info", "text")
    args = build_parser().parse_args(argv)
    if args.command == "list":
        return list_command(args.k8s_version)
    if args.command == "run":
        return run_command(args)
    documents = [orjson.loads(p.read_bytes()) for p in args.files]
    print(markdown(documents))
    return 0


if __name__ == "__main__":
    sys.exit(main())
