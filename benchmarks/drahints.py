"""In-process cost of DynamicResources' queueing hints on claim events: no API server.

scheduler_perf's SchedulingWithResourceClaimTemplate creates its pods at once; each waits
at PreEnqueue ("ResourceClaim not created yet") until the resourceclaim controller has
made its claim from the template and named it in the pod's status. Every claim event
(the controller's Add, then PreBind's Update with the allocation) asks DynamicResources'
hint about each pod still waiting, so the hints cost grows with the square of the pods.
This replays that sequence through the real queue (SchedulingQueue, HintIndex, the
default profile's PreEnqueue and hints, the claim informer's ResourceHandler) and prints
the CPU time per claim event and per hint asked.

    python -m benchmarks.drahints --pods 1000 [--cprofile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from dataclasses import replace

from asched import gctune
from asched.api import Pod
from asched.api.dra import Allocation, DeviceResult, ResourceClaim, decode_resource_claim
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot
from asched.base.clock import RealClock
from asched.framework.events import EventResource
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.informers import Store
from asched.logs import configure_logging
from asched.plugins.dynamicresources.tracker import RESOURCE_CLAIMS
from asched.scheduler.handlers import ResourceHandler
from asched.testing.builders import make_pod
from benchmarks import profiles
from benchmarks.cycle import DRA_CLASS, DRA_DRIVER, _dra_objects, _Services

NAMESPACE = "test"


def _claim(pod: Pod, index: int) -> ResourceClaim:
    """The claim the resourceclaim controller makes for the pod from its template."""
    return decode_resource_claim(
        {
            "metadata": {
                "name": f"{pod.name}-resource-{index:05d}",
                "namespace": NAMESPACE,
                "uid": f"claim-{index}",
                "resourceVersion": "1",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": pod.name,
                        "uid": pod.uid,
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "devices": {
                    "requests": [{"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]
                }
            },
        }
    )


def measure(pods: int, cprofile: str = "") -> tuple[float, int]:
    """(CPU seconds per claim event, hint calls) for `pods` pods created at once."""
    configure_logging("warning")
    gctune.tune()
    spec, registry = profiles.build("default")
    services = _Services(Snapshot())
    for resource, objects in _dra_objects(1, 0).items():
        store: Store[object] = Store()
        for key, obj in objects:
            store.upsert(key, obj, "1")
        store.mark_synced()
        services.stores[resource] = store
    claims = services.stores[RESOURCE_CLAIMS.resource]
    fwk = Framework(spec, registry, services)

    def pre_enqueue(pod: Pod) -> tuple[str, Status] | None:
        return fwk.run_pre_enqueue(pod)

    queue = SchedulingQueue(
        fwk.less,
        RealClock(),
        pre_enqueue=pre_enqueue,
        hints={"default-scheduler": fwk.enqueue_hints()},
    )
    handler = ResourceHandler(EventResource.RESOURCE_CLAIM, lambda: queue)
    waiting = [
        make_pod(f"pod-{i:05d}", NAMESPACE)
        .uid(f"pod-uid-{i}")
        .resource_claim("resource", template="test-claim-template")
        .obj()
        for i in range(pods)
    ]
    for pod in waiting:
        queue.add(pod)
    hint_calls = 0

    gctune.freeze_caches()
    profiler = cProfile.Profile() if cprofile else None
    if profiler is not None:
        profiler.enable()
    start = time.process_time()
    for i, pod in enumerate(waiting):
        claim = _claim(pod, i)
        claims.upsert(claim.key, claim, "1")
        handler.on_add(claim)
        # The controller names the claim in the pod's status: PreEnqueue lets it go.
        named = make_pod(pod.name, NAMESPACE).uid(pod.uid)
        ready = (
            named.resource_claim("resource", template="test-claim-template")
            .claim_status("resource", claim.name)
            .obj()
        )
        queue.update(pod, ready)
        # PreBind writes the allocation while the later pods still wait.
        device = DeviceResult("req-0", DRA_DRIVER, "resourceslice-0", f"basic-device-{i % 10}")
        written = replace(claim, resource_version="2", allocation=Allocation((device,)))
        claims.upsert(claim.key, written, "2")
        handler.on_update(claim, written)
        # Asked of every pod still waiting: pods i.. at the Add, i+1.. at the Update.
        hint_calls += 2 * (pods - i) - 1
    spent = time.process_time() - start
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(cprofile)
        calls = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
        print(f"cprofile={cprofile} calls_per_event={calls / (2 * pods):.0f}")
    return spent / (2 * pods), hint_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--cprofile", default="")
    args = parser.parse_args()
    per_event, hints = measure(args.pods, args.cprofile)
    print(
        f"pods={args.pods} claim_events={2 * args.pods} "
        f"ms_per_claim_event={per_event * 1e3:.3f} hints_asked={hints} "
        f"us_per_hint={per_event * 2 * args.pods / max(hints, 1) * 1e6:.2f}"
    )


if __name__ == "__main__":
    main()
