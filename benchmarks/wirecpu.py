"""asched's own CPU per Binding and Event POST, and what each request costs the process.

Why: end to end, the POSTs a scheduler makes for every pod (a Binding and a Scheduled
Event) and the event loop around them are a larger share of asched's CPU than the
scheduling cycle, and py-spy alone cannot say whether the time under the h1 pool's
`_Connection._flush` is work or waiting. This benchmark measures it in process, against
a real kube-apiserver on loopback: it starts its own cluster (one kwok node), warms the
connections up (their TLS handshakes are not measured), then times phases of N requests
through asched's real client at a fixed number in flight, on uvloop as `asched` runs.

Each phase reports the process's user and system CPU per request (getrusage: the
client's Python and the kernel's loopback TCP work its socket calls do). The layers:
- `bind`: RestClient.bind, the binding cycle's call;
- `event`: RestClient.request POSTing an events.k8s.io/v1 Event, the recorder's call;
- `raw`: H1Pool.round_trip with a request built beforehand (an Event POST, protobuf, as
  `event` sends it): the pool and the socket alone, the least a request can cost here;
- `idle`: the harness's workers with no request, its own cost per item.

A counting phase per layer (`--count`, on the loop named by `--loop`) then reports per
request: the socket writes and TLS records the pool sent, tasks created, on the stdlib
asyncio loop only the loop callbacks run, and with `--strace` every system call of the
process (`strace -c` attached for the phase). `--py-spy PATH` adds a phase per layer
sampled with C frames (wirecpu-LAYER.folded, for `python -m benchmarks hotspots`).

    python -m benchmarks.wirecpu --requests 5000 --rounds 3
    python -m benchmarks.wirecpu --requests 2000 --rounds 1 --count --loop asyncio
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import signal
import statistics
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from asched.client import h1, kproto
from asched.client.kubeconfig import load_kubeconfig
from asched.client.rest import RestClient
from asched.localcluster import LocalCluster, NodeSpec
from benchmarks.profiling import PySpy
from benchmarks.wire import NAMESPACE, NODE, create_pods, event_body

LAYERS = ("bind", "event", "raw", "idle")
STRACE_ATTACH = 1.0
PROFILE_RATE = 250
EVENTS = f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"


@dataclass(slots=True)
class Cpu:
    """User and system CPU seconds of this process."""

    user: float
    system: float

    @classmethod
    def now(cls) -> Cpu:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return cls(usage.ru_utime, usage.ru_stime)

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(self.user - other.user, self.system - other.system)


@dataclass(slots=True)
class Counts:
    """What the pool did on the wire, counted through the transports it wrote to."""

    writes: int = 0
    records: int = 0
    tasks: int = 0
    callbacks: int = 0
    syscalls: dict[str, int] = field(default_factory=dict)
    tails: dict[int, bytes] = field(default_factory=dict)

    def tls_records(self, key: int, data: bytes) -> int:
        """TLS records that start in *data*, a connection's next outgoing bytes."""
        buffer = self.tails.get(key, b"") + data
        records, at = 0, 0
        while at + 5 <= len(buffer):
            length = int.from_bytes(buffer[at + 3 : at + 5], "big")
            if at + 5 + length > len(buffer):
                break
            records += 1
            at += 5 + length
        self.tails[key] = buffer[at:]
        return records


def _syscalls(table: str) -> dict[str, int]:
    """Calls per system call from `strace -c`'s summary table."""
    calls: dict[str, int] = {}
    for line in table.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3])
    return calls


@contextlib.asynccontextmanager
async def tracing(counts: Counts) -> AsyncIterator[None]:
    """System calls of this process's thread while open, by `strace -c` attached to it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "strace.txt"
        process = await anyio.open_process(
            ["strace", "-c", "-p", str(os.getpid()), "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await anyio.sleep(STRACE_ATTACH)
        try:
            yield
        finally:
            process.send_signal(signal.SIGINT)
            await process.wait()
            counts.syscalls = _syscalls(await anyio.Path(out).read_text())


class _CountingTransport:
    """A pool connection's transport that counts its writes and their TLS records."""

    def __init__(self, inner: asyncio.Transport, counts: Counts) -> None:
        self.inner = inner
        self._counts = counts

    def write(self, data: bytes) -> None:
        self._counts.writes += 1
        self._counts.records += self._counts.tls_records(id(self), bytes(data))
        self.inner.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextlib.contextmanager
def counting(counts: Counts, pool: h1.H1Pool) -> Iterator[None]:
    """Count, while open, the pool's socket writes and their TLS records, tasks created
    and (stdlib loop only: uvloop runs its callbacks in C) callbacks run. Wraps the
    transports of the pool's idle connections and of those it opens meanwhile."""
    wrapped = [(c, c.transport) for c in pool._idle if c.transport is not None]
    for open_conn, transport in wrapped:
        open_conn.transport = _CountingTransport(transport, counts)  # type: ignore[assignment]
    conn = h1._Connection
    made = conn.connection_made
    run = asyncio.events.Handle._run
    loop = asyncio.get_running_loop()
    factory = loop.get_task_factory()

    def connection_made(self: h1._Connection, transport: asyncio.BaseTransport) -> None:
        made(self, _CountingTransport(transport, counts))  # type: ignore[arg-type]

    def handle_run(self: asyncio.Handle) -> None:
        counts.callbacks += 1
        run(self)

    def task_factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        counts.tasks += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    conn.connection_made = connection_made  # type: ignore[method-assign]
    asyncio.events.Handle._run = handle_run  # type: ignore[method-assign]
    loop.set_task_factory(task_factory)
    try:
        yield
    finally:
        for open_conn, transport in wrapped:
            open_conn.transport = transport
        conn.connection_made = made  # type: ignore[method-assign]
        asyncio.events.Handle._run = run  # type: ignore[method-assign]
        loop.set_task_factory(factory)


async def run_workers(count: int, inflight: int, fn: Callable[[int], Awaitable[None]]) -> None:
    """*fn* over range(count) by *inflight* workers sharing one iterator: the cheapest
    harness, so the phase's CPU is the requests'."""
    items = iter(range(count))

    async def worker() -> None:
        for i in items:
            await fn(i)

    async with anyio.create_task_group() as tg:
        for _ in range(inflight):
            tg.start_soon(worker)


class Bench:
    """One cluster, one client, phases of requests of each layer."""

    def __init__(self, client: RestClient, uids: list[str], inflight: int) -> None:
        self.client = client
        self.uids = uids
        self.inflight = inflight
        self._next_pod = 0
        self._next_event = 0

    def _pods(self, count: int) -> int:
        first, self._next_pod = self._next_pod, self._next_pod + count
        if self._next_pod > len(self.uids):
            raise RuntimeError("not enough pods created for the bind phases")
        return first

    def _events(self, count: int) -> int:
        first, self._next_event = self._next_event, self._next_event + count
        return first

    def _raw_requests(self, first: int, count: int) -> list[bytes]:
        """Event POSTs encoded as RestClient.request sends them, built before timing."""
        head_lines = self.client._head_lines(kproto.PROTOBUF)
        requests = []
        for i in range(first, first + count):
            body = kproto.encode(event_body(i))
            assert body is not None
            head = f"POST {EVENTS} HTTP/1.1\r\n{head_lines}Content-Length: {len(body)}\r\n\r\n"
            requests.append(head.encode() + body)
        return requests

    async def phase(self, layer: str, count: int) -> Callable[[int], Awaitable[None]]:
        """The request function of *layer*, its inputs reserved for *count* requests."""
        client = self.client
        if layer == "bind":
            first = self._pods(count)

            async def bind(i: int) -> None:
                await client.bind(NAMESPACE, f"wire-{first + i}", self.uids[first + i], NODE)

            return bind
        if layer == "event":
            first = self._events(count)

            async def event(i: int) -> None:
                await client.request("POST", EVENTS, body=event_body(first + i))

            return event
        if layer == "raw":
            requests = self._raw_requests(self._events(count), count)
            pool = client._h1()

            async def raw(i: int) -> None:
                answer = await pool.round_trip("POST", requests[i], None, timeout=60.0)
                if answer.status >= 300:
                    raise RuntimeError(f"raw POST: {answer.status} {answer.body[:200]!r}")

            return raw

        async def idle(i: int) -> None:
            await asyncio.sleep(0)

        return idle

    async def timed(self, layer: str, count: int) -> Cpu:
        """CPU per request of one phase of *layer*."""
        fn = await self.phase(layer, count)
        before = Cpu.now()
        await run_workers(count, self.inflight, fn)
        spent = Cpu.now() - before
        return Cpu(spent.user / count, spent.system / count)

    async def profiled(self, layer: str, count: int, py_spy: Path, out: Path) -> None:
        """One more phase of *layer* with py-spy attached (C frames included)."""
        fn = await self.phase(layer, count)
        sampler = PySpy(py_spy, out, rate=PROFILE_RATE, native=True)
        await sampler.attach(os.getpid())
        await anyio.sleep(STRACE_ATTACH)
        try:
            await run_workers(count, self.inflight, fn)
        finally:
            await sampler.stop()

    async def counted(self, layer: str, count: int, strace: bool) -> Counts:
        fn = await self.phase(layer, count)
        counts = Counts()
        async with contextlib.AsyncExitStack() as stack:
            if strace:
                await stack.enter_async_context(tracing(counts))
            stack.enter_context(counting(counts, self.client._h1()))
            await run_workers(count, self.inflight, fn)
        return counts


@dataclass(slots=True)
class Result:
    per_request: dict[str, list[Cpu]]
    counts: dict[str, Counts]


@dataclass(frozen=True, slots=True)
class Options:
    requests: int
    rounds: int
    inflight: int
    layers: Sequence[str]
    count: bool
    strace: bool
    # py-spy's executable, and the folder its wirecpu-LAYER.folded files go to.
    py_spy: Path | None
    out_dir: Path


async def measure(options: Options) -> Result:
    requests, rounds, inflight, layers = (
        options.requests,
        options.rounds,
        options.inflight,
        options.layers,
    )
    count, py_spy = options.count, options.py_spy
    extra = (requests if count else 0) + (requests if py_spy is not None else 0)
    binds = requests * rounds + extra + inflight
    async with LocalCluster() as cluster:
        await cluster.create_nodes([NodeSpec(name=NODE, pods=1_000_000)])
        connection = await load_kubeconfig(cluster.admin_kubeconfig)
        # As asched runs it (protobuf writes, 100 connections), unthrottled.
        async with RestClient(connection, qps=0, burst=0) as client:
            uids = await create_pods(client, binds if "bind" in layers else 0)
            bench = Bench(client, uids, inflight)
            # Open the connections first: handshakes are start-up, not per request.
            for layer in layers:
                await run_workers(inflight, inflight, await bench.phase(layer, inflight))
            result = Result({layer: [] for layer in layers}, {})
            for r in range(rounds):
                order = list(layers) if r % 2 == 0 else list(reversed(layers))
                for layer in order:
                    result.per_request[layer].append(await bench.timed(layer, requests))
            if py_spy is not None:
                for layer in layers:
                    out = options.out_dir / f"wirecpu-{layer}.folded"
                    await bench.profiled(layer, requests, py_spy, out)
            if count:
                for layer in layers:
                    result.counts[layer] = await bench.counted(layer, requests, options.strace)
            return result


def _us(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1e6:6.1f} ({', '.join(f'{v * 1e6:.1f}' for v in values)})"


def report(result: Result, requests: int) -> str:
    lines = ["CPU per request, us: median (rounds)"]
    for layer, cpus in result.per_request.items():
        total = [c.user + c.system for c in cpus]
        lines.append(
            f"  {layer:6} total {_us(total)}  user {_us([c.user for c in cpus])}"
            f"  system {_us([c.system for c in cpus])}"
        )
    if result.counts:
        lines.append(
            "per request: pool socket writes, TLS records out, tasks, loop callbacks "
            "(stdlib loop only); system calls (--strace)"
        )
        for layer, c in result.counts.items():
            syscalls = " ".join(
                f"{name} {calls / requests:.2f}"
                for name, calls in sorted(c.syscalls.items(), key=lambda kv: -kv[1])
                if calls / requests >= 0.01
            )
            lines.append(
                f"  {layer:6} writes {c.writes / requests:.2f} records {c.records / requests:.2f} "
                f"tasks {c.tasks / requests:.2f} "
                f"callbacks {c.callbacks / requests:.2f}  {syscalls}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000, help="requests per phase")
    parser.add_argument("--rounds", type=int, default=3, help="phases of each layer")
    parser.add_argument("--inflight", type=int, default=16, help="requests in flight")
    parser.add_argument("--layers", default=",".join(LAYERS), help="comma-separated")
    parser.add_argument("--count", action="store_true", help="add a counting phase")
    parser.add_argument(
        "--strace", action="store_true", help="count system calls in the counting phase"
    )
    parser.add_argument(
        "--py-spy",
        type=Path,
        help="path of a py-spy executable: one more phase per layer, sampled, written to "
        "wirecpu-LAYER.folded in the current directory",
    )
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    args = parser.parse_args(argv)
    layers = [layer for layer in args.layers.split(",") if layer]
    unknown = set(layers) - set(LAYERS)
    if unknown:
        parser.error(f"unknown layers: {sorted(unknown)}")
    options = Options(
        requests=args.requests,
        rounds=args.rounds,
        inflight=args.inflight,
        layers=layers,
        count=args.count,
        strace=args.strace,
        py_spy=args.py_spy,
        out_dir=Path.cwd(),
    )
    result = anyio.run(
        measure,
        options,
        backend_options={"use_uvloop": args.loop == "uvloop"},
    )
    print(report(result, args.requests))


if __name__ == "__main__":
    main()
