"""Each profile's Events name the profile as reportingController, as kube-scheduler's do.

kube-scheduler builds one recorder per profile from one broadcaster
(NewRecorder(schedulerName)): reportingController is the schedulerName and
reportingInstance `<schedulerName>-<hostname>`. asched's EventRecorder.for_controller is
that recorder; the queue, aggregation and drain stay the shared recorder's.
"""

from __future__ import annotations

import dataclasses
import socket
from typing import cast

from asched.app import scheduler_options
from asched.base.clock import FakeClock
from asched.client.protocol import KubeClient
from asched.config import load_config
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from tests.builders import make_pod
from tests.unit.test_recorder import FakeEventsApi, make_recorder

TWO_PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: asched
- schedulerName: custom-scheduler
"""


def reporters(api: FakeEventsApi) -> list[tuple[str, str, str]]:
    return sorted(
        (body["reportingController"], body["reportingInstance"], body["reason"])
        for method, _, body in api.requests
        if method == "POST"
    )


async def test_each_controller_view_stamps_its_own_names_on_one_queue() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    pod = make_pod("p").obj()

    recorder.for_controller("asched").event(pod, "Warning", "FailedScheduling", "Scheduling", "x")
    recorder.for_controller("custom-scheduler").event(
        pod, "Warning", "FailedScheduling", "Scheduling", "x"
    )
    # The same occurrence from two controllers is two Events, not one series of two.
    assert recorder.pending == 2
    await recorder.drain()

    host = socket.gethostname()
    assert reporters(api) == [
        ("asched", f"asched-{host}", "FailedScheduling"),
        ("custom-scheduler", f"custom-scheduler-{host}", "FailedScheduling"),
    ]


async def test_repeats_aggregate_per_controller() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    view = recorder.for_controller("asched")
    pod = make_pod("p").obj()

    view.event(pod, "Warning", "FailedScheduling", "Scheduling", "x")
    await recorder.drain()
    assert recorder.for_controller("asched") is view  # one view per controller
    view.event(pod, "Warning", "FailedScheduling", "Scheduling", "x")
    await recorder.drain()

    # The repeat is a series PATCH on the first Event, not a second Event.
    assert api.writes == ["POST", "PATCH"]
    (event,) = api.events.values()
    assert event["series"]["count"] == 2


async def test_scheduler_gives_every_profile_its_own_reporting_controller() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    registry = in_tree_registry()
    options = scheduler_options(load_config(TWO_PROFILES, registry))
    client = cast(KubeClient, object())  # never called: the scheduler is not run
    sched = Scheduler(client, registry, options, clock=clock, events=recorder)

    for profile in ("asched", "custom-scheduler"):
        pod = make_pod(f"p-{profile}").scheduler(profile).obj()
        # The hook the scheduling and binding cycles record through.
        sched.parts.events_for(profile).event(pod, "Normal", "Scheduled", "Binding", "bound")
    await recorder.drain()

    host = socket.gethostname()
    assert reporters(api) == [
        ("asched", f"asched-{host}", "Scheduled"),
        ("custom-scheduler", f"custom-scheduler-{host}", "Scheduled"),
    ]


async def test_plugins_record_as_their_profile() -> None:
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    registry = in_tree_registry()
    options = scheduler_options(load_config(TWO_PROFILES, registry))
    sched = Scheduler(cast(KubeClient, object()), registry, options, clock=clock, events=recorder)

    for profile, fwk in sched.frameworks.items():
        fwk.handle.events.event(make_pod("p").obj(), "Warning", "Note", "Gang", profile)
    await recorder.drain()

    assert sorted(body["reportingController"] for _, _, body in api.requests) == [
        "asched",
        "custom-scheduler",
    ]


async def test_deleting_pod_is_skipped_with_kube_schedulers_event() -> None:
    # skipPodSchedule: a pod being deleted gets a Warning FailedScheduling
    # "skip schedule deleting pod: <ns>/<name>" from its profile and is not scheduled.
    api, clock = FakeEventsApi(), FakeClock()
    recorder = make_recorder(api, clock)
    registry = in_tree_registry()
    options = scheduler_options(load_config(TWO_PROFILES, registry))
    sched = Scheduler(cast(KubeClient, object()), registry, options, clock=clock, events=recorder)
    live = make_pod("live").scheduler("custom-scheduler").obj()
    going = dataclasses.replace(
        make_pod("going").scheduler("custom-scheduler").obj(), deletion_timestamp=1.0
    )
    for pod in (live, going):
        sched.pod_informer.store.upsert(pod.key, pod, "1")

    assert sched.skip_pod(going)
    assert not sched.skip_pod(live)
    await recorder.drain()
    assert [
        (body["reportingController"], body["type"], body["reason"], body["note"])
        for _, _, body in api.requests
    ] == [
        (
            "custom-scheduler",
            "Warning",
            "FailedScheduling",
            "skip schedule deleting pod: default/going",
        )
    ]
