"""kube-apiserver's CPU per write, JSON against protobuf request bodies.

Starts its own loopback cluster (one kwok node), then POSTs the two writes a scheduler
makes for every pod, Bindings and events.k8s.io/v1 Events, through asched's RestClient,
alternating a phase of JSON bodies and a phase of protobuf bodies (the order swapped
every round) and reading kube-apiserver's CPU from /proc around each phase. A phase
starts and ends with a quiet second, so each side pays the same idle time. Reports each
round's ms of API-server CPU per write for both, and the paired ratio protobuf / JSON.

    python -m benchmarks.wire --writes 1500 --rounds 8 --kind event
    python -m benchmarks.wire --writes 1000 --rounds 8 --kind bind
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

import anyio

from asched.client import kproto
from asched.client.kubeconfig import load_kubeconfig
from asched.client.rest import JSON, RestClient
from asched.localcluster import LocalCluster, NodeSpec
from benchmarks.procstat import cpu_seconds
from benchmarks.workload import run_pool

NAMESPACE = "default"
NODE = "wire-node"
SETTLE_SECONDS = 1.0
INFLIGHT = 16
CONTENT_TYPES = (JSON, kproto.PROTOBUF)


def event_body(i: int) -> dict[str, Any]:
    """A Scheduled Event as asched's recorder writes it (asched.recorder.writer)."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"wire-{i}", "namespace": NAMESPACE},
        "eventTime": "2026-12-05T01:00:00.123456Z",
        "reportingController": "asched",
        "reportingInstance": "asched-bench",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": NAMESPACE,
            "name": f"wire-{i}",
            "uid": "4fc63268-19a3-49f2-952a-2d4589f5b752",
            "resourceVersion": "123",
        },
        "note": f"Successfully assigned {NAMESPACE}/wire-{i} to {NODE}",
        "type": "Normal",
    }


async def create_pods(client: RestClient, count: int) -> list[str]:
    """*count* pods wire-0, wire-1, ... nobody schedules; their uids, for Bindings."""
    uids: list[str] = [""] * count

    async def create(i: int) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"wire-{i}"},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]},
        }
        doc = await client.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", body=body)
        uids[i] = doc["metadata"]["uid"]

    await run_pool(list(range(count)), create, INFLIGHT)
    return uids


Write = Callable[[RestClient, int], Coroutine[Any, Any, None]]


async def measure(kind: str, writes: int, rounds: int) -> dict[str, list[float]]:
    """ms of kube-apiserver CPU per write, per round, for each content type."""
    async with LocalCluster() as cluster:
        apiserver = cluster.pids["kube-apiserver"]
        await cluster.create_nodes([NodeSpec(name=NODE, pods=1_000_000)])
        connection = await load_kubeconfig(cluster.admin_kubeconfig)
        async with (
            RestClient(connection, qps=0, burst=0, connections=INFLIGHT, content_type=JSON) as js,
            RestClient(
                connection, qps=0, burst=0, connections=INFLIGHT, content_type=kproto.PROTOBUF
            ) as pb,
        ):
            clients = {JSON: js, kproto.PROTOBUF: pb}
            uids = await create_pods(js, writes * rounds * 2) if kind == "bind" else []

            async def bind(client: RestClient, i: int) -> None:
                await client.bind(NAMESPACE, f"wire-{i}", uids[i], NODE)

            async def event(client: RestClient, i: int) -> None:
                path = f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"
                await client.request("POST", path, body=event_body(i))

            write: Write = bind if kind == "bind" else event
            per_write: dict[str, list[float]] = {ct: [] for ct in CONTENT_TYPES}
            for r in range(rounds):
                order = CONTENT_TYPES if r % 2 == 0 else CONTENT_TYPES[::-1]
                for half, content_type in enumerate(order):
                    first = (2 * r + half) * writes
                    client = clients[content_type]

                    async def one(i: int, client: RestClient = client) -> None:
                        await write(client, i)

                    await anyio.sleep(SETTLE_SECONDS)
                    before = cpu_seconds(apiserver)
                    await run_pool(list(range(first, first + writes)), one, INFLIGHT)
                    await anyio.sleep(SETTLE_SECONDS)
                    spent = cpu_seconds(apiserver) - before
                    per_write[content_type].append(spent / writes * 1000)
            return per_write


def report(kind: str, per_write: Mapping[str, Sequence[float]]) -> str:
    js, pb = per_write[JSON], per_write[kproto.PROTOBUF]
    ratios = [p / j for j, p in zip(js, pb, strict=True) if j > 0]
    lines = [
        f"{kind}: kube-apiserver CPU ms per write, {len(js)} paired rounds",
        f"  json     {[round(x, 3) for x in js]} median {statistics.median(js):.3f}",
        f"  protobuf {[round(x, 3) for x in pb]} median {statistics.median(pb):.3f}",
        f"  paired protobuf/json {[round(x, 3) for x in ratios]} "
        f"median {statistics.median(ratios):.3f}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("bind", "event"), default="event")
    parser.add_argument("--writes", type=int, default=1500, help="writes per phase")
    parser.add_argument("--rounds", type=int, default=8, help="paired JSON/protobuf phases")
    args = parser.parse_args(argv)
    per_write = anyio.run(measure, args.kind, args.writes, args.rounds)
    print(report(args.kind, per_write))


if __name__ == "__main__":
    main()
