"""In-process cost of the scheduling cycle: no API server, no network.

Schedules M pods through the real framework (the default profile's plugins, the real
Algorithm, the real Cache and Snapshot) over N nodes, assuming each pod in the cache as
the scheduler does, and prints the CPU time per pod. This isolates the algorithm from the
wire, so a change to the framework runtime can be compared before and after.

    python -m benchmarks.cycle --nodes 5000 --pods 500 [--kind basic|spread] [--no-columnar]
    python -m benchmarks.cycle --nodes 5000 --pods 1000 --profile batchable [--no-batching]
    python -m benchmarks.cycle --nodes 500 --pods 500 --kind antiaffinity --unique-labels
    python -m benchmarks.cycle --curve 100,1000,5000,15000 --plot docs/img/cycle-cost.png
    python -m benchmarks.cycle --nodes 500 --pods 100 --kind dra --cprofile dra.prof
    python -m benchmarks.cycle --nodes 200 --pods 200 --kind dra --init-claims 1000
    python -m benchmarks.cycle --nodes 1000 --pods 1000 --profile policies   # + the six policies
    python -m benchmarks.cycle --curve 1000,5000 --kinds basic \
        --paths columnar,policies,per-node-plugins
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anyio

from asched import gctune
from asched.api import Pod, decode_node, decode_pod
from asched.api.dra import decode_device_class, decode_resource_claim, decode_resource_slice
from asched.backend.cache import Cache
from asched.backend.snapshot import Snapshot
from asched.base.clock import RealClock
from asched.client.protocol import KubeClient
from asched.framework.cycle_state import CycleState
from asched.framework.handle import EventRecorder
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.runtime import Framework
from asched.framework.services import RuntimeMetrics
from asched.informers import Store
from asched.plugins.deviceclasses import DEVICE_CLASSES
from asched.plugins.dynamicresources.state import STATE_KEY as DRA_STATE_KEY
from asched.plugins.dynamicresources.tracker import RESOURCE_CLAIMS, RESOURCE_SLICES
from asched.scheduler.algorithm import Algorithm
from benchmarks import profiles
from benchmarks.profiles import PROFILES
from benchmarks.scenarios import LOCATION_ANNOTATION
from benchmarks.schedulers import REGION_LABEL, REGIONS

ZONES = ("zone-a", "zone-b", "zone-c")
KINDS = (
    "basic",
    "spread",
    "antiaffinity",
    "nodeaffinity",
    "preferred-spread",
    "preferred-affinity",
    "preferred-antiaffinity",
    "affinity",
    "dra",
)
#: The dra kind (scheduler_perf's SchedulingWithResourceClaimTemplate): each node has one
#: ResourceSlice of this many devices, as templates/resourceslice-basic-devices.yaml.
DRA_DEVICES = 10
DRA_DRIVER = "test-driver.cdi.k8s.io"
DRA_CLASS = "test-class"


def _node(i: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"node-{i}",
            "uid": f"nu-{i}",
            "labels": {
                "kubernetes.io/hostname": f"node-{i}",
                "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                REGION_LABEL: REGIONS[i % len(REGIONS)],
            },
        },
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(i: int, kind: str, unique_labels: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}],
    }
    labels = {"app": "bench"}
    if kind == "antiaffinity":
        # scheduler_perf's pod-with-pod-anti-affinity: at most one per hostname.
        term = {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    if kind == "affinity":
        # scheduler_perf's pod-with-pod-affinity: required affinity to its own kind by zone
        # (there every node is in one zone; here the first pod picks one of three).
        term = {
            "labelSelector": {"matchLabels": labels},
            "topologyKey": "topology.kubernetes.io/zone",
        }
        spec["affinity"] = {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    if kind in ("preferred-affinity", "preferred-antiaffinity"):
        # scheduler_perf's pod-with-preferred-pod-(anti-)affinity, weight 1 per hostname.
        term = {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
        field = "podAffinity" if kind == "preferred-affinity" else "podAntiAffinity"
        spec["affinity"] = {
            field: {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": term}
                ]
            }
        }
    if kind == "nodeaffinity":
        # scheduler_perf's pod-with-node-affinity: two zones of three.
        req = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(ZONES[:2])}
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [req]}]
                }
            }
        }
    if kind == "preferred-spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": labels},
            }
        ]
    if kind == "spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ]
    if kind == "dra":
        # The claim is named directly rather than made from a template: the template's
        # claim is an ordinary claim by the time the scheduler sees it.
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"claim-{i}"}]
    if unique_labels:
        # scheduler_perf's createPods gives each pod its own `signature` label, which no
        # term selects (podTemplateWithParams.GetPodTemplate).
        labels = {**labels, "signature": f"signature-label-{i}"}
    return {
        "metadata": {
            "name": f"pod-{i}",
            "namespace": "bench",
            "uid": f"pu-{i}",
            "labels": labels,
            # Location's wish (examples/policies), as the `plugins` scenario's pods carry.
            "annotations": {LOCATION_ANNOTATION: REGIONS[0]},
        },
        "spec": spec,
    }


def _dra_objects(nodes: int, pods: int, init_claims: int = 0) -> dict[str, list[tuple[str, Any]]]:
    """The dra kind's cluster as scheduler_perf's templates make it (resourceslice-basic-
    devices.yaml, deviceclass.yaml, one claim of one request per pod, and `init_claims`
    claims already allocated, as its initClaims and allocResourceClaims): store key and
    decoded object, by informer resource."""
    if init_claims > nodes * DRA_DEVICES:
        raise ValueError(f"{init_claims} init claims but only {nodes * DRA_DEVICES} devices")
    attributes = {
        "driver": {"string": "xe"},
        "driverVersion": {"version": "1.2.3"},
        "family": {"string": "Arc Pro B-Series"},
        "health": {"string": "Healthy"},
        "model": {"string": "B60"},
        "pciId": {"string": "0xe211"},
        "sriov": {"bool": True},
        "type": {"string": "gpu"},
    }
    slices = [
        decode_resource_slice(
            {
                "metadata": {"name": f"resourceslice-{i}"},
                "spec": {
                    "pool": {
                        "name": f"resourceslice-{i}",
                        "generation": 1,
                        "resourceSliceCount": 1,
                    },
                    "driver": DRA_DRIVER,
                    "nodeName": f"node-{i}",
                    "devices": [
                        {
                            "name": f"basic-device-{d}",
                            "attributes": {
                                **attributes,
                                "resource.k8s.io/pciRoot": {"string": str(d % 2)},
                                "pciAddress": {"string": f"0000:0{d}:00.0"},
                                "pciRoot": {"string": f"0{d % 2}"},
                            },
                            "capacity": {
                                "memory": {"value": "24480Mi"},
                                "millicores": {"value": "1k"},
                            },
                        }
                        for d in range(DRA_DEVICES)
                    ],
                },
            }
        )
        for i in range(nodes)
    ]
    cls = decode_device_class(
        {
            "metadata": {"name": DRA_CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]},
        }
    )
    claims = [
        decode_resource_claim(
            {
                "metadata": {
                    "name": f"claim-{i}",
                    "namespace": "bench",
                    "uid": f"cu-{i}",
                    "resourceVersion": "1",
                },
                "spec": {
                    "devices": {
                        "requests": [{"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]
                    }
                },
            }
        )
        for i in range(pods)
    ]
    # Spread over the nodes as allocResourceClaims leaves them: claim j on node j % nodes.
    claims.extend(
        decode_resource_claim(
            {
                "metadata": {
                    "name": f"init-{j}",
                    "namespace": "init",
                    "uid": f"init-{j}",
                    "resourceVersion": "1",
                },
                "spec": {
                    "devices": {
                        "requests": [{"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "req-0",
                                    "driver": DRA_DRIVER,
                                    "pool": f"resourceslice-{j % nodes}",
                                    "device": f"basic-device-{j // nodes}",
                                }
                            ]
                        }
                    }
                },
            }
        )
        for j in range(init_claims)
    )
    return {
        RESOURCE_SLICES.resource: [(s.name, s) for s in slices],
        DEVICE_CLASSES.resource: [(cls.name, cls)],
        RESOURCE_CLAIMS.resource: [(c.key, c) for c in claims],
    }


def _dra_allocate(services: _Services, state: CycleState, node_name: str, cycle: int) -> None:
    """What Reserve and PreBind leave behind once the pod's claim is written: the claim
    allocated in the claim informer's store, so the next pod sees its devices in use."""
    allocation = state.get(DRA_STATE_KEY).node_allocations[node_name][0]
    store = services.stores[RESOURCE_CLAIMS.resource]
    key = f"bench/claim-{cycle - 1}"
    claim = store.get(key)
    assert claim is not None
    store.upsert(key, replace(claim, allocation=allocation), str(cycle + 1))


class _Services:
    """The little a default profile asks of its scheduler when nothing is pending."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.clock = RealClock()
        self.client: KubeClient = None  # type: ignore[assignment]
        self.events: EventRecorder = _NoEvents()
        self.snapshot: SnapshotLister = snapshot
        self.parallelism = 16
        self.metrics: RuntimeMetrics | None = None
        self.pods: list[Pod] = []
        self.stores: dict[str, Store[Any]] = {}

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        # Services, ReplicaSets ... : none exist in this cluster. A dict lookup, as the
        # scheduler's own (Scheduler._informer_for): setdefault(..., Store()) would build
        # and drop a Store on every call, a cost the real path does not have.
        store = self.stores.get(request.resource)
        if store is None:
            store = self.stores[request.resource] = Store()
        return store

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self.pods

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return ()

    def has_nominated_pods(self) -> bool:
        return False

    def activate(self, pods: Sequence[Pod]) -> None:
        return None


class _NoEvents:
    def event(self, regarding: Any, event_type: str, reason: str, action: str, msg: str) -> None:
        return None


async def measure(
    nodes: int,
    pods: int,
    kind: str,
    columnar: bool = True,
    *,
    profile: str = "default",
    batching: bool = True,
    unique_labels: bool = False,
    cprofile: str = "",
    init_claims: int = 0,
) -> float:
    """CPU seconds per pod for `pods` scheduling cycles over `nodes` nodes; with
    `cprofile`, the cycles run under cProfile, their stats written to that file."""
    # The collector as the scheduler sets it (asched.app.run): its thresholds, and the
    # caches frozen once filled. Without that, whether one full collection of the whole
    # heap (about 50 ms at 15000 nodes) lands inside a short run depended on how many
    # objects start-up happened to allocate: measured from the source tree rather than
    # byte code, basic at 15000 nodes read 0.47 ms/pod instead of 0.30.
    gctune.tune()
    spec, registry = profiles.build(profile)
    cache, snapshot = Cache(), Snapshot()
    for i in range(nodes):
        cache.add_node(decode_node(_node(i)))
    services = _Services(snapshot)
    fwk = Framework(spec, registry, services, columnar=columnar, batching=batching)
    algo = Algorithm(0)
    todo = [decode_pod(_pod(i, kind, unique_labels)) for i in range(pods)]
    if kind == "dra":
        for resource, objects in _dra_objects(nodes, pods, init_claims).items():
            store = services.stores[resource] = Store()
            for key, obj in objects:
                store.upsert(key, obj, "1")
            store.mark_synced()
    # The first refresh clones every node into the snapshot; a running scheduler pays
    # that once at start-up, not per pod, so it stays out of the measurement.
    cache.update_snapshot(snapshot)
    gctune.freeze_caches()
    profiler = cProfile.Profile() if cprofile else None
    if profiler is not None:
        profiler.enable()
    start = time.process_time()
    for cycle, pod in enumerate(todo, 1):
        cache.update_snapshot(snapshot)
        state = CycleState()
        result = await algo.schedule_pod(fwk, state, pod, snapshot.node_infos(), cycle=cycle)
        if kind == "dra":
            _dra_allocate(services, state, result.suggested_host, cycle)
        placed = replace(pod, node_name=result.suggested_host)
        cache.assume_pod(placed)
        services.pods.append(placed)
    spent = (time.process_time() - start) / pods
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(cprofile)
        calls = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
        print(f"cprofile={cprofile} calls_per_pod={calls / pods:.0f}")
    return spent


#: The curve's paths: (name, columnar, profile). "batched" is the columnar path under the
#: batchable profile, where alike pods take opportunistic batching's hints; it is drawn
#: for basic pods only (spread and anti-affinity pods are never signable).
PATHS = (
    ("columnar", True, "default"),
    ("per-node", False, "default"),
    ("batched", True, "batchable"),
    # The profiles users add plugins to (benchmarks/profiles.py), on the columnar path.
    ("policies", True, "policies"),
    ("per-node-plugins", True, "per-node"),
)
DEFAULT_PATHS = "columnar,per-node,batched"


def curve(
    sizes: Sequence[int],
    pods: int,
    kinds: Sequence[str],
    reps: int,
    chosen: Sequence[str] = DEFAULT_PATHS.split(","),
) -> list[dict[str, Any]]:
    """ms/pod for every (kind, size, path), median of `reps`; the paths alternate within
    each repetition so all see the same machine load."""
    rows: list[dict[str, Any]] = []
    for kind in kinds:
        paths = [p for p in PATHS if p[0] in chosen and (p[0] != "batched" or kind == "basic")]
        for n in sizes:
            samples: dict[str, list[float]] = {name: [] for name, _, _ in paths}
            for _ in range(reps):
                for name, columnar, profile in paths:
                    # At most one anti-affine pod fits a node: more would fail the cycle.
                    m = min(pods, n) if kind == "antiaffinity" else pods
                    samples[name].append(_measure_in_child(n, m, kind, columnar, profile))
            for name, ms in samples.items():
                rows.append(
                    {
                        "kind": kind,
                        "nodes": n,
                        "path": name,
                        "ms_per_pod": statistics.median(ms),
                        "samples": [round(x, 3) for x in ms],
                    }
                )
                print(
                    f"kind={kind} nodes={n} path={name} "
                    f"ms_per_pod={rows[-1]['ms_per_pod']:.3f} samples={rows[-1]['samples']}",
                    flush=True,
                )
    return rows


def _measure_in_child(nodes: int, pods: int, kind: str, columnar: bool, profile: str) -> float:
    """One measurement in a fresh interpreter: earlier sizes' garbage and heap growth
    would otherwise be charged to later ones."""
    cmd = [sys.executable, "-m", "benchmarks.cycle", "--nodes", str(nodes), "--pods", str(pods)]
    cmd += ["--kind", kind, "--profile", profile] + ([] if columnar else ["--no-columnar"])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(out.rsplit("ms_per_pod=", 1)[1].split()[0])


def plot(rows: Sequence[dict[str, Any]], path: str) -> None:
    """The curve as a PNG (needs matplotlib: pip install '.[bench]')."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind in sorted({r["kind"] for r in rows}):
        for path_name, style in (
            ("columnar", "-o"),
            ("per-node", "--s"),
            ("batched", ":^"),
            ("policies", "-.D"),
            ("per-node-plugins", "-.v"),
        ):
            pts = [r for r in rows if r["kind"] == kind and r["path"] == path_name]
            if pts:
                ax.plot(
                    [r["nodes"] for r in pts],
                    [r["ms_per_pod"] for r in pts],
                    style,
                    label=f"{kind}, {path_name}",
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("CPU ms per pod (in-process cycle, median)")
    drawn = {r["path"] for r in rows}
    title = "asched scheduling cycle cost"
    if "batched" in drawn:
        title += " (batched: basic pods, batchable profile)"
    if drawn & {"policies", "per-node-plugins"}:
        title += "\n(policies: + the six examples; per-node-plugins: + two naive plugins)"
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=300)
    ap.add_argument("--kind", choices=KINDS, default="basic")
    ap.add_argument("--no-columnar", dest="columnar", action="store_false")
    ap.add_argument("--profile", choices=PROFILES, default="default")
    ap.add_argument(
        "--no-batching",
        dest="batching",
        action="store_false",
        help="OpportunisticBatching off (it only acts under --profile batchable)",
    )
    ap.add_argument(
        "--unique-labels",
        action="store_true",
        help="each pod gets its own `signature` label, as scheduler_perf's createPods does",
    )
    ap.add_argument(
        "--cprofile", default="", help="write a cProfile of the measured cycles to this file"
    )
    ap.add_argument("--curve", default="", help="comma list of node counts: both paths, --kinds")
    ap.add_argument(
        "--kinds",
        default="basic,spread,antiaffinity",
        help="with --curve: comma list of pod kinds",
    )
    ap.add_argument(
        "--init-claims",
        type=int,
        default=0,
        help="with --kind dra: claims allocated before the pods (scheduler_perf's initClaims)",
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--paths",
        default=DEFAULT_PATHS,
        help=f"with --curve: comma list of {', '.join(p[0] for p in PATHS)}",
    )
    ap.add_argument("--plot", default="", help="with --curve: write the curve as this PNG")
    ap.add_argument("--json", default="", help="with --curve: write the rows as JSON")
    args = ap.parse_args()
    if args.curve:
        sizes = [int(x) for x in args.curve.split(",")]
        kinds = [k for k in args.kinds.split(",") if k]
        unknown = sorted(set(kinds) - set(KINDS))
        if unknown:
            ap.error(f"--kinds: unknown kind(s) {', '.join(unknown)}; choose from {KINDS}")
        chosen = [p for p in args.paths.split(",") if p]
        unknown = sorted(set(chosen) - {p[0] for p in PATHS})
        if unknown:
            ap.error(f"--paths: unknown path(s) {', '.join(unknown)}")
        rows = curve(sizes, args.pods, kinds, args.reps, chosen)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(rows, f, indent=1)
        if args.plot:
            plot(rows, args.plot)
        return
    per_pod = anyio.run(
        functools.partial(
            measure,
            args.nodes,
            args.pods,
            args.kind,
            args.columnar,
            profile=args.profile,
            batching=args.batching,
            unique_labels=args.unique_labels,
            cprofile=args.cprofile,
            init_claims=args.init_claims,
        )
    )
    path = "columnar" if args.columnar else "per-node"
    print(
        f"kind={args.kind} nodes={args.nodes} pods={args.pods} path={path} "
        f"profile={args.profile} batching={'on' if args.batching else 'off'} "
        f"unique_labels={'on' if args.unique_labels else 'off'} init_claims={args.init_claims} "
        f"ms_per_pod={per_pod * 1e3:.3f}"
    )


if __name__ == "__main__":
    main()
