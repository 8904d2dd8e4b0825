"""The API server's own binding ceiling: bind pre-created pods with a bare client.

No scheduling at all: asched's production RestClient (asched.client.rest) POSTs a Binding
for each pod, round-robin over the nodes, with a fixed number of requests in flight and no
client rate limit. What it reaches is the most pods/s this machine's kube-apiserver, etcd
and kwok accept while the benchmark watches - the physical limit both schedulers share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from asched.client.kubeconfig import load_kubeconfig
from asched.client.rest import RestClient
from benchmarks.workload import CreatedPod, run_pool

NAME = "bare-bind"
#: The schedulerName of the ceiling run's pods: nobody serves it, the bare client binds them.
SCHEDULER_NAME = "nobody-bench"


async def bind_all(
    kubeconfig: Path,
    namespace: str,
    pods: Mapping[str, CreatedPod],
    nodes: Sequence[str],
    *,
    inflight: int = 64,
) -> None:
    connection = await load_kubeconfig(kubeconfig)
    targets = [
        (name, created.uid, nodes[i % len(nodes)])
        for i, (name, created) in enumerate(sorted(pods.items()))
    ]
    # qps 0: the token bucket lets everything through, as with --kube-api-qps unlimited.
    async with RestClient(connection, qps=0, burst=0, connections=inflight) as client:

        async def bind(target: tuple[str, str, str]) -> None:
            name, uid, node = target
            await client.bind(namespace, name, uid, node)

        await run_pool(targets, bind, inflight)
