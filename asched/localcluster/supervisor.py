"""The detached process behind ``asched cluster up``: it owns one LocalCluster.

A CLI command must return, but the cluster's processes need a parent that stops them in
order and reaps them. This supervisor is that parent. It runs in its own session (so the
terminal's Ctrl-C does not reach it), records progress in the state file, and on SIGTERM,
SIGINT or SIGHUP stops the cluster and exits. Run as ``python -m asched.localcluster.supervisor``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import structlog

from asched.localcluster.local import LocalCluster
from asched.localcluster.nodes import node_specs
from asched.localcluster.state import CLUSTER_SUBDIR, ClusterState, write_state

log = structlog.get_logger()


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``asched cluster up`` and the supervisor."""
    parser.add_argument("--nodes", type=int, default=0, help="kwok nodes to create (default 0)")
    parser.add_argument("--node-cpu", default="4", help="CPU per node (default 4)")
    parser.add_argument("--node-memory", default="32Gi", help="memory per node (default 32Gi)")
    parser.add_argument("--node-pods", type=int, default=110, help="pods per node (default 110)")
    parser.add_argument(
        "--gpu-nodes", type=int, default=0, help="how many of the nodes carry GPUs (default 0)"
    )
    parser.add_argument(
        "--gpus-per-node", type=int, default=8, help="nvidia.com/gpu per GPU node (default 8)"
    )
    parser.add_argument(
        "--throttled",
        action="store_true",
        help="keep kube-apiserver's inflight limits and API Priority and Fairness on",
    )
    parser.add_argument(
        "--ready-timeout",
        type=float,
        default=300.0,
        help="seconds to wait for the control plane and all nodes (default 300)",
    )


def cluster_option_argv(args: argparse.Namespace) -> list[str]:
    """The supervisor command-line options that reproduce *args*."""
    argv = [
        f"--nodes={args.nodes}",
        f"--node-cpu={args.node_cpu}",
        f"--node-memory={args.node_memory}",
        f"--node-pods={args.node_pods}",
        f"--gpu-nodes={args.gpu_nodes}",
        f"--gpus-per-node={args.gpus_per_node}",
        f"--ready-timeout={args.ready_timeout}",
    ]
    if args.throttled:
        argv.append("--throttled")
    return argv


async def supervise(args: argparse.Namespace) -> int:
    state_dir: Path = args.dir
    state = ClusterState(
        supervisor_pid=os.getpid(), phase="starting", work_dir=str(state_dir / CLUSTER_SUBDIR)
    )
    await anyio.to_thread.run_sync(write_state, state_dir, state)
    cluster = LocalCluster(work_dir=state_dir / CLUSTER_SUBDIR, unthrottled=not args.throttled)
    exit_code = 0
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                async for signum in signals:
                    log.info("supervisor_signal", signal=signal.Signals(signum).name)
                    tg.cancel_scope.cancel()
                    return

            tg.start_soon(stop_on_signal)
            try:
                began = time.monotonic()
                with anyio.fail_after(args.ready_timeout):
                    await cluster.start()
                    specs = node_specs(
                        args.nodes,
                        cpu=args.node_cpu,
                        memory=args.node_memory,
                        pods=args.node_pods,
                        gpu_nodes=args.gpu_nodes,
                        gpus_per_node=args.gpus_per_node,
                    )
                    await cluster.add_nodes(specs)
                state = dataclasses.replace(
                    state,
                    phase="ready",
                    server=cluster.server,
                    admin_kubeconfig=str(cluster.admin_kubeconfig),
                    scheduler_kubeconfig=str(cluster.scheduler_kubeconfig),
                    pids=cluster.pids,
                    nodes=len(specs),
                    seconds_to_ready=round(time.monotonic() - began, 2),
                )
                await anyio.to_thread.run_sync(write_state, state_dir, state)
                log.info("supervisor_ready", seconds=state.seconds_to_ready, nodes=state.nodes)
                await anyio.sleep_forever()
            except Exception as err:
                log.exception("supervisor_failed")
                message = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
                state = dataclasses.replace(state, phase="failed", error=message)
                exit_code = 1
                tg.cancel_scope.cancel()
            finally:
                await cluster.stop()
    if state.phase != "failed":
        state = dataclasses.replace(state, phase="stopped")
    state = dataclasses.replace(state, pids=cluster.pids)
    await anyio.to_thread.run_sync(write_state, state_dir, state)
    return exit_code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"{sys.executable} -m asched.localcluster.supervisor")
    parser.add_argument("--dir", type=Path, required=True, help="state directory")
    add_cluster_options(parser)
    args = parser.parse_args(argv)
    return anyio.run(supervise, args)


if __name__ == "__main__":
    sys.exit(main())
