"""Where asched's memory goes across control-plane faults: a diagnostic, not a CI test.

    python -m benchmarks.memtrace run --nodes 200 --pods 800 --faults restart,410,etcd --out DIR
    python -m benchmarks.memtrace report DIR/memtrace-...      # the analysis again

The soak (benchmarks/soak.py) showed asched's resident memory growing in steps at the
faults and flat between them. This command reproduces that at a smaller scale and says
what the steps are made of. It runs:

- a loopback cluster with `--nodes` kwok nodes and the soak's churn (a population of
  `--pods` pods, the `--replace` oldest replaced every second, and scheduler_perf's mixed
  churn beside them), with the soak's own code (benchmarks.soak.Soak);
- asched as a child process, as the soak runs it, but started through this module's
  `child` command: it starts tracemalloc (`--frames` frames per allocation, 0 for none)
  and a probe thread, then runs asched's `run` command unchanged;
- a probe after the warm-up (`warm`), another `--settle` seconds later with no fault
  (`steady`: what churn alone adds), and one `--settle` seconds after each fault, for
  `--rounds` rounds of `--faults` (restart: kube-apiserver SIGKILLed and restarted twice
  10 s apart; 410: etcd compacted while kube-apiserver is down, restarted with its
  watch cache off; etcd: etcd SIGSTOPped 8 s; the soak's `inject`). With
  `--restart-first`, asched is SIGKILLed after the warm-up and its successor, started on
  the settled population as the soak's first fault does, is the process measured, after
  a warm-up of its own.

A probe, in the child, holding the GIL (so asched is stopped while it looks):
1. the resident memory (/proc/self/status: VmRSS, RssAnon), glibc's heap (mallinfo2:
   bytes taken from the system, in use, free, mmapped) and pymalloc's arenas
   (sys._debugmallocstats: arenas now and at their highest, bytes in used blocks and in
   free ones; CPython reports nothing for it while tracemalloc hooks the allocator, so
   only with `--frames 0`), sys.getallocatedblocks(), tracemalloc's traced bytes and
   its own overhead;
2. a full collection with the frozen generation unfrozen (asched.gctune freezes every
   tick's survivors), counting what it found, then malloc_trim(0) (what asched's Trimmer
   does within a second), then the figures of 1 again: the memory that is live or held
   by an allocator, not garbage;
3. a tracemalloc snapshot, without the traces this module or tracemalloc made;
4. a census of the collector's objects by type (count and shallow size).

The report (`report.txt` and `report.json` beside the probes) has the figures of every
probe side by side, then the largest growths from `warm` (and from `steady`) to the
last probe by traceback (`--group-frames` frames, file:line), by line, and by type.
Memory the allocators hold but nothing uses (pymalloc's free blocks in partly used
arenas, glibc's free chunks) shows up in the figures and not in the snapshots; live
memory shows up in both.

RSS under tracemalloc is not asched's (tracemalloc's traces take memory, reported as
`tracemalloc_overhead`): `--frames 0` gives the figures without it.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import os
import signal
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

PROBE_POLL_S = 0.2
PEAK_POLL_S = 0.01
PROBE_TIMEOUT_S = 900.0
PROBE_SWITCH_INTERVAL_S = 1.0
# The probe's own code, by how its file names end (the child may run from another copy).
OWN_FILES = ("benchmarks/memtrace.py", "/tracemalloc.py")

# -- the child: asched's process, measured from inside ------------------------------------


class _MallInfo2(ctypes.Structure):
    # glibc's struct mallinfo2 (malloc.h), every field a size_t.
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


@dataclass(frozen=True, slots=True)
class _Libc:
    mallinfo2: Any
    malloc_trim: Any
    fopen: Any
    fclose: Any


def _libc() -> _Libc | None:
    """glibc's heap statistics and trim, or None off glibc (the figures are left out)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        info, trim, fopen, fclose = libc.mallinfo2, libc.malloc_trim, libc.fopen, libc.fclose
    except (OSError, AttributeError, TypeError):
        return None
    info.restype = _MallInfo2
    info.argtypes = []
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    fopen.restype = ctypes.c_void_p
    fclose.argtypes = [ctypes.c_void_p]
    return _Libc(info, trim, fopen, fclose)


def _proc_status() -> dict[str, int]:
    out: dict[str, int] = {}
    with open("/proc/self/status", "rb") as status:
        for line in status:
            key, _, rest = line.partition(b":")
            if key in (b"VmRSS", b"RssAnon", b"RssFile", b"VmHWM", b"VmData"):
                out[key.decode()] = int(rest.split()[0]) * 1024
    return out


def _smaps() -> dict[str, int]:
    """Resident memory by where it lives (/proc/self/smaps): glibc's main heap ([heap],
    grown by brk), the other anonymous mappings (pymalloc's 1 MiB arenas, glibc's mmapped
    chunks and its per-thread arenas, thread stacks), and files (code, libraries). Under
    tracemalloc pymalloc reports nothing; this still tells its arenas from glibc's heap."""
    out = {"smaps_heap_rss": 0, "smaps_heap_size": 0, "smaps_anon_rss": 0, "smaps_file_rss": 0}
    target = ""
    with open("/proc/self/smaps", "rb") as smaps:
        for line in smaps:
            head = line.split(maxsplit=6)
            if head and b"-" in head[0] and not head[0].endswith(b":"):
                path = head[5].strip() if len(head) > 5 else b""
                if path == b"[heap]":
                    target = "heap"
                elif not path or path.startswith(b"[anon"):
                    target = "anon"
                elif path.startswith(b"["):
                    target = ""  # stack, vdso, vvar
                else:
                    target = "file"
            elif target and head[0] in (b"Rss:", b"Size:"):
                kib = int(head[1]) * 1024
                if head[0] == b"Rss:":
                    out[f"smaps_{target}_rss"] += kib
                elif target == "heap":
                    out["smaps_heap_size"] += kib
    return out


# sys._debugmallocstats' lines this reads ("# arenas allocated current = 23", and
# "# bytes in allocated blocks = 1,234,567"), by the key they are reported under.
_PYMALLOC_LINES = {
    "# arenas allocated total": "arenas_allocated_total",
    "# arenas reclaimed": "arenas_reclaimed",
    "# arenas highwater mark": "arenas_highwater",
    "# arenas allocated current": "arenas_current",
    "# bytes in allocated blocks": "bytes_in_used_blocks",
    "# bytes in available blocks": "bytes_in_free_blocks",
    "# bytes lost to pool headers": "bytes_pool_headers",
    "# bytes lost to quantization": "bytes_quantization",
}


def _pymalloc_stats(libc: _Libc | None) -> dict[str, int]:
    """pymalloc's arena and block totals (CPython's _PyObject_DebugMallocStats, written to
    a file through a C FILE so that the process's stderr, asched's log, is left alone)."""
    if libc is None:
        return {}
    try:
        stats = ctypes.pythonapi._PyObject_DebugMallocStats
    except AttributeError:
        return {}
    stats.argtypes = [ctypes.c_void_p]
    with tempfile.NamedTemporaryFile(suffix=".txt") as tmp:
        handle = libc.fopen(tmp.name.encode(), b"w")
        if not handle:
            return {}
        try:
            stats(handle)
        finally:
            libc.fclose(handle)
        text = Path(tmp.name).read_text(errors="replace")
    out: dict[str, int] = {}
    for line in text.splitlines():
        head, sep, value = line.partition("=")
        key = _PYMALLOC_LINES.get(head.strip())
        if sep and key is not None:
            out[key] = int(value.strip().replace(",", ""))
        elif "unused pools *" in line:
            out["unused_pools"] = int(line.split()[0].replace(",", ""))
    return out


def memory_figures(libc: _Libc | None) -> dict[str, int]:
    """Every figure of a probe's step 1, flat, in bytes (counts where named so)."""
    out = {f"proc_{k}": v for k, v in _proc_status().items()}
    out.update(_smaps())
    if libc is not None:
        info = libc.mallinfo2()
        out["glibc_sbrk_arena"] = info.arena
        out["glibc_mmapped"] = info.hblkhd
        out["glibc_in_use"] = info.uordblks
        out["glibc_free"] = info.fordblks
        out["glibc_free_chunks"] = info.ordblks
        out["glibc_top_releasable"] = info.keepcost
    out.update({f"pymalloc_{k}": v for k, v in _pymalloc_stats(libc).items()})
    out["allocated_blocks"] = sys.getallocatedblocks()
    if tracemalloc.is_tracing():
        out["traced_current"], out["traced_peak"] = tracemalloc.get_traced_memory()
        out["tracemalloc_overhead"] = tracemalloc.get_tracemalloc_memory()
    return out


def _full_collection() -> int:
    """Unfreeze, collect everything, freeze again (as gctune.Sweeper's full collection)."""
    gc.unfreeze()
    try:
        return gc.collect()
    finally:
        gc.freeze()


def _census() -> dict[str, list[int]]:
    """type -> [count, shallow bytes] over every object the collector tracks. Keyed by the
    type object while counting: a name built per object costs seconds under tracemalloc."""
    counts: dict[type, int] = {}
    sizes: dict[type, int] = {}
    size_of = sys.getsizeof
    gc.unfreeze()
    try:
        objects = gc.get_objects()
    finally:
        gc.freeze()
    for obj in objects:
        kind = type(obj)
        counts[kind] = counts.get(kind, 0) + 1
        sizes[kind] = sizes.get(kind, 0) + size_of(obj)
    del objects
    return {f"{k.__module__}.{k.__qualname__}": [counts[k], sizes[k]] for k in counts}


def probe(label: str, out_dir: Path) -> None:
    """One probe (the module docstring's steps 1-4), written to out_dir/label.*. The
    snapshot is not filtered here: tracemalloc's filters match every frame of every trace
    with fnmatch, minutes for a few million traces in a traced process; the report leaves
    the probe's own traces out instead (`_load_snapshot`)."""
    libc = _libc()
    began = time.perf_counter()
    # The probe is meant to stop the world: a long switch interval keeps asched's loop
    # thread from taking the GIL back every 5 ms while the probe walks the heap.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(PROBE_SWITCH_INTERVAL_S)
    try:
        _probe(label, out_dir, libc, began)
    finally:
        sys.setswitchinterval(interval)


def _probe(label: str, out_dir: Path, libc: _Libc | None, began: float) -> None:
    result: dict[str, Any] = {"label": label, "at": time.time()}
    result["before_collection"] = memory_figures(libc)
    result["collected_objects"] = _full_collection()
    if libc is not None:
        libc.malloc_trim(0)
    result["figures"] = memory_figures(libc)
    if tracemalloc.is_tracing():
        snapshot = tracemalloc.take_snapshot()
        snapshot.dump(str(out_dir / f"{label}.snapshot"))
        del snapshot
    result["census"] = _census()
    if tracemalloc.is_tracing():
        # Last, so traced_peak in the next probe is the highest point between the two
        # probes, not this one's snapshot (tens of MiB of tuples while it is built).
        tracemalloc.reset_peak()
    result["probe_seconds"] = time.perf_counter() - began
    (out_dir / f"{label}.json").write_bytes(orjson.dumps(result))
    (out_dir / f"{label}.done").touch()


def _serve_probes(control: Path) -> None:
    """The probe thread: answers every `<label>.request` file in *control* with a probe.
    A thread, so asched's code is run unchanged; a probe holds the GIL while it looks,
    which stops asched's loop, as a pause would. While tracing, it also snapshots the
    transient peaks between probes (PeakWatch)."""
    peaks = PeakWatch(control) if tracemalloc.is_tracing() else None
    polls = 0
    scan_every = int(PROBE_POLL_S / PEAK_POLL_S) if peaks is not None else 1
    while True:
        # The traced memory is read every PEAK_POLL_S (a C call), the directory every
        # PROBE_POLL_S: a fault's transient lasts a fraction of a second.
        if polls % scan_every == 0:
            for request in sorted(control.glob("*.request")):
                label = request.stem
                request.unlink()
                try:
                    probe(label, control)
                except Exception as exc:  # the harness waits for an answer: give one
                    (control / f"{label}.failed").write_text(repr(exc))
                if peaks is not None:
                    peaks.after_probe(label)
        polls += 1
        if peaks is not None:
            peaks.check()
        time.sleep(PEAK_POLL_S if peaks is not None else PROBE_POLL_S)


# A peak snapshot is taken when the traced memory passes the last probe's by this much,
# and again (at most PEAK_SNAPSHOTS times between two probes) each time it passes the
# last peak snapshot's by PEAK_STEP.
PEAK_MARGIN = 3 << 20
PEAK_STEP = 1.25
PEAK_SNAPSHOTS = 3


class PeakWatch:
    """Snapshots of the traced memory at its transient highs between two probes (named
    `peak-<last probe>-<n>`): what a fault allocates and frees again, which pymalloc's
    arenas and glibc's heap may keep (the report compares each with the probe before)."""

    def __init__(self, control: Path) -> None:
        self._control = control
        self._after = ""
        self._threshold = 0
        self._taken = PEAK_SNAPSHOTS  # none before the first probe

    def after_probe(self, label: str) -> None:
        self._after = label
        self._threshold = tracemalloc.get_traced_memory()[0] + PEAK_MARGIN
        self._taken = 0

    def check(self) -> None:
        if self._taken >= PEAK_SNAPSHOTS:
            return
        current = tracemalloc.get_traced_memory()[0]
        if current < self._threshold:
            return
        self._taken += 1
        snapshot = tracemalloc.take_snapshot()
        snapshot.dump(str(self._control / f"peak-{self._after}-{self._taken}.snapshot"))
        del snapshot
        self._threshold = int(max(current, self._threshold) * PEAK_STEP)


def run_child(argv: Sequence[str]) -> int:
    """`child --control DIR --frames N -- run ...`: asched's command, probed."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memtrace child")
    parser.add_argument("--control", type=Path, required=True)
    parser.add_argument("--frames", type=int, default=10)
    parser.add_argument("--step-peaks", type=float, default=0.0)
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("asched_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.frames > 0:
        tracemalloc.start(args.frames)
    args.control.mkdir(parents=True, exist_ok=True)
    if args.step_peaks > 0:
        from benchmarks.steppeaks import StepPeaks

        if not tracemalloc.is_tracing():
            tracemalloc.start(1)
        StepPeaks(args.control, int(args.step_peaks * 2**20)).install()
    if args.page_size > 0:
        # An experiment on the LIST page size: the informers' default, before any exists.
        from asched.informers.informer import Informer

        defaults = Informer.__init__.__kwdefaults__
        assert defaults is not None
        defaults["page_size"] = args.page_size
    threading.Thread(
        target=_serve_probes, args=(args.control,), name="memtrace-probe", daemon=True
    ).start()
    from asched.cli import main as asched_main

    rest = list(args.asched_args)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    return asched_main(rest)


# -- the harness: cluster, churn, faults, probes -------------------------------------------

FAULT_NAMES = {"restart": "apiserver", "apiserver": "apiserver", "410": "410", "etcd": "etcd"}


def _fault_kinds(names: str) -> list[str]:
    out = []
    for raw in names.split(","):
        name = raw.strip()
        if name not in FAULT_NAMES:
            raise argparse.ArgumentTypeError(
                f"unknown fault {name!r}: choose from {', '.join(sorted(FAULT_NAMES))}"
            )
        out.append(FAULT_NAMES[name])
    return out


async def _ask_probe(control: Path, label: str, child_running: Any) -> dict[str, Any]:
    import anyio

    await anyio.Path(control / f"{label}.request").touch()
    with anyio.fail_after(PROBE_TIMEOUT_S):
        while True:
            if await anyio.Path(control / f"{label}.done").exists():
                break
            failed = anyio.Path(control / f"{label}.failed")
            if await failed.exists():
                raise RuntimeError(f"probe {label} failed: {await failed.read_text()}")
            if not child_running():
                raise RuntimeError(f"asched exited before probe {label}")
            await anyio.sleep(0.5)
    data: dict[str, Any] = orjson.loads(await anyio.Path(control / f"{label}.json").read_bytes())
    return data


async def run_trace(args: argparse.Namespace) -> Path:
    import anyio

    from asched.localcluster import LocalCluster, NodeSpec
    from benchmarks import soak as soakmod
    from benchmarks.churn import ensure_priority_class
    from benchmarks.schedulers import ClientLimits, Kind, SchedulerProcess, SchedulerSetup
    from benchmarks.workload import create_namespace

    work_dir: Path = args.work_dir
    control = work_dir / "probes"
    control.mkdir(parents=True)
    kinds = {
        "apiserver": soakmod.APISERVER_TWICE,
        "410": soakmod.WATCH_EXPIRY,
        "etcd": soakmod.ETCD_PAUSE,
    }
    meta: dict[str, Any] = {
        "nodes": args.nodes,
        "pods": args.pods,
        "replace_per_s": args.replace,
        "faults": args.faults,
        "rounds": args.rounds,
        "warmup_s": args.warmup,
        "settle_s": args.settle,
        "frames": args.frames,
        "page_size": args.page_size,
        "restart_first": args.restart_first,
        "loadavg_start": list(os.getloadavg()),
        "probes": [],
    }
    async with LocalCluster(unthrottled=True) as cluster:
        specs = [NodeSpec(f"mem-{i:05d}", cpu=soakmod.NODE_CPU) for i in range(args.nodes)]
        nodes = await cluster.create_nodes(specs, concurrency=32)
        with anyio.fail_after(600):
            await cluster.wait_nodes_ready(nodes)
        async with cluster.admin_client(connections=32, timeout=30) as admin:
            await create_namespace(admin, soakmod.NAMESPACE)
            await ensure_priority_class(admin)
            limits = ClientLimits(500, 1000)
            soak = soakmod.Soak(cluster, admin, work_dir, limits, args.pods, args.replace)
            launcher = [
                sys.executable,
                "-m",
                "benchmarks.memtrace",
                "child",
                "--control",
                str(control),
                "--frames",
                str(args.frames),
                "--step-peaks",
                str(args.step_peaks),
                "--page-size",
                str(args.page_size),
                "--",
            ]

            def child() -> SchedulerProcess:
                return SchedulerProcess(
                    Kind.ASCHED,
                    SchedulerSetup(limits),
                    work_dir=work_dir,
                    admin_kubeconfig=cluster.admin_kubeconfig,
                    scheduler_kubeconfig=cluster.scheduler_kubeconfig,
                    extra_args=["--log-format", "json"],
                    launcher=launcher,
                )

            proc = child()
            for _ in range(args.pods // 2):
                await soak.create_pod()
            soak.started = time.time()
            await proc.start()
            soak.proc = proc
            try:
                with anyio.fail_after(300):
                    await proc.wait_ready()
                for _ in range(args.pods - args.pods // 2):
                    await soak.create_pod()

                async def take(label: str) -> None:
                    result = await _ask_probe(control, label, proc.running)
                    meta["probes"].append(label)
                    rss = result["figures"].get("proc_VmRSS", 0) / 2**20
                    print(f"probe {label}: RSS {rss:.1f} MiB, {result['probe_seconds']:.1f} s")

                async with anyio.create_task_group() as tg:
                    tg.start_soon(soak.replace_pods)
                    if args.mixed_churn:
                        tg.start_soon(soak.mixed_churn)
                    await anyio.sleep(args.warmup)
                    if args.restart_first:
                        # The soak's first fault: the process it measures is one that
                        # started on a settled population, not the one that took the
                        # start-up burst.
                        os.killpg(proc.pid, signal.SIGKILL)
                        await proc.stop()
                        proc = child()
                        await proc.start()
                        soak.proc = proc
                        with anyio.fail_after(300):
                            await proc.wait_ready()
                        print(f"asched restarted: pid {proc.pid}")
                        await anyio.sleep(args.warmup)
                    await take("00-warm")
                    await anyio.sleep(args.settle)
                    await take("01-steady")
                    step = 2
                    for round_ in range(args.rounds):
                        for fault in args.faults:
                            await soak.inject(kinds[fault])
                            await anyio.sleep(args.settle)
                            await take(f"{step:02d}-r{round_ + 1}-{fault}")
                            step += 1
                    tg.cancel_scope.cancel()
                meta["exit_code_on_sigterm"] = await proc.stop()
            finally:
                # Cancelled (Ctrl-C, a timeout): asched runs in a session of its own and
                # would outlive the harness and its cluster. stop() again does nothing.
                with anyio.CancelScope(shield=True):
                    await proc.stop()
            meta["harness_request_failures"] = soak.request_failures
    meta["loadavg_end"] = list(os.getloadavg())
    (work_dir / "meta.json").write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
    return work_dir


# -- the report ------------------------------------------------------------------------------

# The figures the report's first table shows, by the name a reader knows them by.
TABLE = (
    ("RSS", "proc_VmRSS"),
    ("RssAnon", "proc_RssAnon"),
    ("brk heap RSS", "smaps_heap_rss"),
    ("brk heap size", "smaps_heap_size"),
    ("other anon RSS", "smaps_anon_rss"),
    ("glibc in use", "glibc_in_use"),
    ("glibc free", "glibc_free"),
    ("glibc sbrk", "glibc_sbrk_arena"),
    ("glibc mmap", "glibc_mmapped"),
    ("pymalloc arenas", "pymalloc_arenas_current"),
    ("pymalloc peak arenas", "pymalloc_arenas_highwater"),
    ("pymalloc used", "pymalloc_bytes_in_used_blocks"),
    ("pymalloc free", "pymalloc_bytes_in_free_blocks"),
    ("traced", "traced_current"),
    ("traced peak since last", "traced_peak"),
    ("tracemalloc own", "tracemalloc_overhead"),
)
COUNTS = {"pymalloc_arenas_current", "pymalloc_arenas_highwater"}


def _fmt(key: str, value: int | None) -> str:
    if value is None:
        return "-"
    if key in COUNTS:
        return str(value)
    return f"{value / 2**20:.1f}"


def _probes(run_dir: Path) -> list[dict[str, Any]]:
    control = run_dir / "probes"
    return [orjson.loads(p.read_bytes()) for p in sorted(control.glob("*.json"))]


def _figures_table(probes: Sequence[dict[str, Any]]) -> list[str]:
    header = ["probe", "collected", *(name for name, _ in TABLE), "blocks", "gc objects"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for p in probes:
        f = p["figures"]
        objects = sum(c for c, _ in p["census"].values())
        row = [
            p["label"],
            str(p["collected_objects"]),
            *(_fmt(key, f.get(key)) for _, key in TABLE),
            str(f.get("allocated_blocks", "-")),
            str(objects),
        ]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("(MiB unless a count; after the full collection and malloc_trim)")
    return lines


def _census_growth(
    old: dict[str, list[int]], new: dict[str, list[int]], top: int
) -> list[tuple[str, int, int]]:
    rows = []
    for name in old.keys() | new.keys():
        oc, osz = old.get(name, [0, 0])
        nc, nsz = new.get(name, [0, 0])
        if nc != oc:
            rows.append((name, nc - oc, nsz - osz))
    rows.sort(key=lambda r: (-r[2], -r[1]))
    return rows[:top]


def _snapshot_growth(
    run_dir: Path, old: str, new: str, *, key: str, frames: int, top: int
) -> list[dict[str, Any]]:
    control = run_dir / "probes"
    old_path, new_path = control / f"{old}.snapshot", control / f"{new}.snapshot"
    if not (old_path.exists() and new_path.exists()):
        return []
    before, after = _load_snapshot(old_path), _load_snapshot(new_path)
    stats = after.compare_to(before, key)
    stats.sort(key=lambda s: -s.size_diff)
    out = []
    for stat in stats[:top]:
        # The allocating line first (a Traceback runs from the oldest frame).
        where = [f"{_short(f.filename)}:{f.lineno}" for f in reversed(stat.traceback)][:frames]
        out.append(
            {
                "size_diff": stat.size_diff,
                "count_diff": stat.count_diff,
                "size": stat.size,
                "where": where,
            }
        )
    return out


def _growth_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    lines = []
    for r in rows:
        lines.append(
            f"{r['size_diff'] / 1024:+10.1f} KiB {r['count_diff']:+8d} blocks "
            f"(now {r['size'] / 1024:.1f} KiB)"
        )
        lines.extend(f"        {w}" for w in r["where"])
    return lines


def _load_snapshot(path: Path) -> tracemalloc.Snapshot:
    """A probe's snapshot without the traces the probe made (a frame in this file or in
    tracemalloc's). Snapshot's own filter_traces matches with fnmatch per frame; this
    compares the file names as they are, through the raw traces (domain, size, frames,
    total frames) that Snapshot keeps and takes."""
    snapshot = tracemalloc.Snapshot.load(str(path))
    raw = snapshot.traces._traces  # type: ignore[attr-defined]
    kept = [t for t in raw if not any(frame[0].endswith(OWN_FILES) for frame in t[2])]
    return tracemalloc.Snapshot(kept, snapshot.traceback_limit)


def _short(filename: str) -> str:
    """A path from its package down (asched/..., anyio/...), never the machine's prefix."""
    parts = Path(filename).parts
    for anchor in ("site-packages", "lib"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[i + 1 :])
    for package in ("asched", "benchmarks"):
        if package in parts:
            i = parts.index(package)
            return "/".join(parts[i:])
    return parts[-1]


def report(run_dir: Path, *, top: int = 25, frames: int = 10) -> dict[str, Any]:
    """report.txt and report.json for a finished run's probes."""
    probes = _probes(run_dir)
    if not probes:
        raise SystemExit(f"no probes in {run_dir}")
    labels = [p["label"] for p in probes]
    by_label = {p["label"]: p for p in probes}
    first, last = labels[0], labels[-1]
    document: dict[str, Any] = {"probes": {p["label"]: p["figures"] for p in probes}}
    lines = [f"memtrace {run_dir.name}", "", *_figures_table(probes), ""]
    pairs = [(first, last)]
    if len(labels) > 2:
        pairs.append((labels[1], last))
    for old, new in pairs:
        growth: dict[str, Any] = {}
        for key, depth in (("traceback", frames), ("lineno", 1)):
            rows = _snapshot_growth(run_dir, old, new, key=key, frames=depth, top=top)
            growth[key] = rows
            lines.append(f"## growth {old} -> {new} by {key} (top {top})")
            lines.extend(_growth_lines(rows))
            lines.append("")
        census = _census_growth(by_label[old]["census"], by_label[new]["census"], top)
        growth["types"] = census
        lines.append(f"## growth {old} -> {new} by type (top {top}, shallow bytes)")
        lines.extend(
            f"{size / 1024:+10.1f} KiB {count:+8d}  {name}" for name, count, size in census
        )
        lines.append("")
        document[f"{old}->{new}"] = growth
    document["peaks"] = {}
    for path in sorted((run_dir / "probes").glob("peak-*.snapshot")):
        peak = path.stem
        base = peak.removeprefix("peak-").rsplit("-", 1)[0]
        rows = _snapshot_growth(run_dir, base, peak, key="traceback", frames=frames, top=top)
        document["peaks"][peak] = rows
        lines.append(f"## transient: {base} -> {peak} by traceback (top {top})")
        lines.extend(_growth_lines(rows))
        lines.append("")
    steps = run_dir / "probes" / "steps.jsonl"
    if steps.exists():
        from benchmarks.steppeaks import summary

        lines.append("## event-loop steps whose traced peak passed --step-peaks")
        lines.extend(summary(steps, top))
        lines.append("")
    text = "\n".join(lines)
    (run_dir / "report.txt").write_text(text)
    (run_dir / "report.json").write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    print(text)
    return document


# -- the command -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["child"]:
        return run_child(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memtrace", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="a cluster, asched probed across faults, and the report")
    run.add_argument("--nodes", type=int, default=200)
    run.add_argument("--pods", type=int, default=800, help="the steady population")
    run.add_argument("--replace", type=int, default=5, help="pods replaced per second")
    run.add_argument(
        "--faults",
        type=_fault_kinds,
        default=_fault_kinds("restart,410,etcd"),
        help="comma separated, in order: restart (kube-apiserver twice), 410, etcd",
    )
    run.add_argument("--rounds", type=int, default=2, help="times the fault list is run")
    run.add_argument("--warmup", type=float, default=120.0, help="seconds before `warm`")
    run.add_argument("--settle", type=float, default=60.0, help="seconds from a fault to its probe")
    run.add_argument("--frames", type=int, default=10, help="tracemalloc frames (0: off)")
    run.add_argument(
        "--step-peaks",
        type=float,
        default=0.0,
        help="MiB: record each event-loop step whose traced peak rises this much "
        "(benchmarks/steppeaks.py; asyncio's loop instead of uvloop)",
    )
    run.add_argument(
        "--page-size",
        type=int,
        default=0,
        help="the informers' LIST page size for this run (0: asched's default)",
    )
    run.add_argument(
        "--restart-first",
        action="store_true",
        help="SIGKILL asched after the warm-up and measure its successor, as the soak does",
    )
    run.add_argument("--no-mixed-churn", dest="mixed_churn", action="store_false")
    run.add_argument("--top", type=int, default=25)
    run.add_argument("--out", type=Path, required=True)
    rep = sub.add_parser("report", help="the report of a finished run again")
    rep.add_argument("run_dir", type=Path)
    rep.add_argument("--top", type=int, default=25)
    rep.add_argument("--frames", type=int, default=10)
    args = parser.parse_args(argv)
    if args.command == "report":
        report(args.run_dir, top=args.top, frames=args.frames)
        return 0
    import anyio

    stamp = time.strftime("%Y%m%dT%H%M%S")
    args.work_dir = args.out.resolve() / f"memtrace-{args.nodes}n-{args.pods}p-{stamp}"
    args.work_dir.mkdir(parents=True)
    run_dir = anyio.run(run_trace, args)
    report(run_dir, top=args.top, frames=min(args.frames, 10) or 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
