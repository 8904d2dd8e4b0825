"""The composition root of a scheduler: builds its components and wires them together.

What kube-scheduler's scheduler.New does: the cache and snapshot, the status writers, the
extenders, one framework runtime per profile (with the services they see), the queue,
the informers and their handlers, the pod view, the outcomes and the three cycles. The
Scheduler (scheduler.py) runs them; it builds nothing itself. The informer callbacks
(a pod gone, an object that cannot be decoded, skipPodSchedule) live here because they
only join components, they never touch the run's state.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from asched.api import DecodeError, Pod, decode_node, decode_pod
from asched.backend.cache import Cache
from asched.backend.queue import SchedulingQueue
from asched.backend.snapshot import Snapshot
from asched.base import featuregates
from asched.base.clock import Clock
from asched.client.protocol import KubeClient
from asched.client.readback import ReadBack
from asched.config.model import ExtenderConfig
from asched.extender import (
    EXTENDER_EVENTS,
    EXTENDER_NAME,
    Extenders,
    WireObjects,
    build_extenders,
)
from asched.framework.extenders import PreemptionExtenders
from asched.framework.grouptree import GroupForest
from asched.framework.handle import EventRecorder, profile_events
from asched.framework.listers import InformerRequest, ObjectStore, SnapshotLister
from asched.framework.registry import Registry
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.services import RuntimeMetrics
from asched.framework.status import Status
from asched.framework.workloads import COMPOSITE_POD_GROUPS, NATIVE_POD_GROUPS
from asched.informers import NON_TERMINAL_PODS, Informer
from asched.informers.informer import NODES_PATH, PODS_PATH
from asched.informers.store import Store
from asched.scheduler.algorithm import Algorithm
from asched.scheduler.bindcheck import BindCheck
from asched.scheduler.cycle import Assumed, BindingCycle, CycleMetrics, SchedulingCycle
from asched.scheduler.groupcycle import GroupCycle, GroupMetrics
from asched.scheduler.handlers import NodeHandler, PodHandler, ResourceHandler
from asched.scheduler.observe import CycleObserver
from asched.scheduler.outcome import Outcomes
from asched.scheduler.podgroupstatus import PodGroupConditionWriter
from asched.scheduler.podstatus import PodStatusWriter
from asched.scheduler.podview import POD_INDEXERS, PodView
from asched.scheduler.views import SchedulerView, Views

log = structlog.get_logger(__name__)


class SchedulerMetrics(RuntimeMetrics, CycleMetrics, GroupMetrics, Protocol):
    def observe_attempt(self, result: str, profile: str, seconds: float) -> None: ...

    def set_cache_size(self, nodes: int, pods: int, assumed_pods: int) -> None: ...

    def pod_scheduled(self, attempts: int, sli_seconds: float) -> None: ...

    def set_pending(self, counts: Mapping[str, int]) -> None: ...

    def incoming(self, queue: str, event: str) -> None: ...


@dataclass(slots=True)
class Options:
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    # Binding cycles past Permit that may talk to the API server at once.
    max_concurrent_binds: int = 256
    shutdown_grace_seconds: float = 10.0
    # Called once the caches have synced (the process owner may tune the GC there).
    on_synced: Callable[[], None] | None = None
    profiles: list[ProfileSpec] = field(default_factory=list)
    # The columnar Filter/Score path (asched.framework.batch); off runs every plugin
    # node by node, which decides the same and is the reference to compare against.
    columnar: bool = True
    # kube-scheduler's OpportunisticBatching gate (beta, on in 1.37;
    # asched.framework.opportunistic): `--feature-gates OpportunisticBatching=false`.
    opportunistic_batching: bool = True
    # The config's `extenders` (asched.extender).
    extenders: tuple[ExtenderConfig, ...] = ()


@dataclass(slots=True)
class _ObjRef:
    """An event target for an object we could not decode."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    api_version: str = "v1"
    resource_version: str = ""


def _api_version(list_path: str) -> str:
    """ "/apis/scheduling.k8s.io/v1beta1/podgroups" -> "scheduling.k8s.io/v1beta1"."""
    parts = list_path.strip("/").split("/")
    return "/".join(parts[1:3]) if parts[0] == "apis" else parts[1]


class _NullRecorder:
    def event(
        self, regarding: Any, event_type: str, reason: str, action: str, message: str
    ) -> None:
        log.info("event", reason=reason, message=message, type=event_type)


class Components:
    """One scheduler's components, built and wired (see the module docstring).

    `to_binding` is how the scheduling and group cycles hand an assumed pod to the
    runtime's binding task group."""

    def __init__(
        self,
        client: KubeClient,
        registry: Registry,
        options: Options,
        *,
        clock: Clock,
        events: EventRecorder | None,
        metrics: SchedulerMetrics | None,
        to_binding: Callable[[Assumed], None],
    ) -> None:
        self.client = client
        self.options = options
        self.clock = clock
        self.events: EventRecorder = events or _NullRecorder()
        self.metrics = metrics
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.status_writer = PodStatusWriter(client, self.clock, metrics)
        self.podgroup_conditions = PodGroupConditionWriter(client, self.clock, metrics)
        self._stores: dict[str, Informer[Any]] = {}
        services = _Services(self)
        # The extenders keep the JSON of every pod and node for their requests; without
        # extenders nothing is kept.
        self.wire_objects: WireObjects | None = WireObjects() if options.extenders else None
        self.extenders = (
            build_extenders(options.extenders, self.wire_objects)
            if self.wire_objects is not None
            else Extenders(())
        )
        self.frameworks: dict[str, Framework] = {
            p.scheduler_name: Framework(
                p,
                registry,
                services,
                columnar=options.columnar,
                # kube-scheduler turns pod signatures off in a profile with extenders
                # (computeBatchablePlugins), which leaves opportunistic batching idle.
                batching=options.opportunistic_batching and not self.extenders,
            )
            for p in options.profiles
        }
        if not self.frameworks:
            raise ValueError("at least one profile is required")
        # One recorder per profile over the shared one, as kube-scheduler's profiles each
        # get NewRecorder(schedulerName) from one broadcaster.
        self._profile_events = {name: profile_events(self.events, name) for name in self.frameworks}
        first = next(iter(self.frameworks.values()))
        hints = {name: fwk.enqueue_hints() for name, fwk in self.frameworks.items()}
        if self.extenders:
            for profile_hints in hints.values():
                profile_hints[EXTENDER_NAME] = EXTENDER_EVENTS
        self.queue = SchedulingQueue(
            first.less,
            self.clock,
            initial_backoff=options.pod_initial_backoff_seconds,
            max_backoff=options.pod_max_backoff_seconds,
            pre_enqueue=self._pre_enqueue,
            hints=hints,
            metrics=metrics,
        )
        self.pod_handler = PodHandler(
            self.cache, self.queue, self._responsible, self._pod_gone, self._pod_invalid
        )
        wire = self.wire_objects
        self.node_informer: Informer[Any] = Informer(
            client,
            NODES_PATH,
            decode_node if wire is None else wire.keeping_nodes(decode_node),
            NodeHandler(self.cache, self.queue, None if wire is None else wire.forget_node),
            clock=self.clock,
            name="nodes",
        )
        # Finished pods free their resources: kube-scheduler's informer leaves them out,
        # and a pod that finishes arrives as a delete.
        self.pod_informer: Informer[Any] = Informer(
            client,
            PODS_PATH,
            decode_pod if wire is None else wire.keeping_pods(decode_pod),
            self.pod_handler,
            clock=self.clock,
            name="pods",
            params={"fieldSelector": NON_TERMINAL_PODS},
            indexers=POD_INDEXERS,
        )
        # What Handle.pods_in_namespace / pods_in_group answer.
        self.pod_view = PodView(self.pod_informer.store, self.cache)
        for fwk in self.frameworks.values():
            for req in fwk.informer_requests():
                self._informer_for(req)
        self.outcomes = Outcomes(
            queue=self.queue,
            current_pod=self.pod_informer.store.get,
            events=self.events_for,
            conditions=self.status_writer,
            clock=self.clock,
            metrics=metrics,
        )
        self.scheduling_cycle = SchedulingCycle(
            frameworks=self.frameworks,
            cache=self.cache,
            snapshot=self.snapshot,
            algorithm=Algorithm(options.percentage_of_nodes_to_score, self.extenders),
            queue=self.queue,
            outcomes=self.outcomes,
            skip=self.skip_pod,
            to_binding=to_binding,
            metrics=metrics,
        )
        self.group_cycle = GroupCycle(
            frameworks=self.frameworks,
            cache=self.cache,
            snapshot=self.snapshot,
            algorithm=self.scheduling_cycle.algorithm,
            take=self.queue.take,
            members=self.pod_view.pods_in_scheduling_group,
            groups=lambda: self._informer_for(NATIVE_POD_GROUPS).store,
            conditions=self.podgroup_conditions,
            outcomes=self.outcomes,
            skip=self.skip_pod,
            to_binding=to_binding,
            metrics=metrics,
            forest=self._forest if featuregates.enabled("CompositePodGroup") else None,
        )
        if featuregates.enabled("CompositePodGroup"):
            # The group cycle reads both stores whether or not a plugin asked for them.
            self._informer_for(NATIVE_POD_GROUPS)
            self._informer_for(COMPOSITE_POD_GROUPS)
        self.binding_cycle = BindingCycle(
            cache=self.cache,
            queue=self.queue,
            outcomes=self.outcomes,
            events=self.events_for,
            limiter=asyncio.Semaphore(options.max_concurrent_binds),
            metrics=metrics,
            nominate=self.status_writer.set_nominated,
            before_binding=self.status_writer.before_binding,
            extenders=self.extenders,
            group_members=self.pod_view.pods_in_scheduling_group,
            check=BindCheck(ReadBack(client, self.clock)),
        )

    def view(self, ready: Callable[[], bool]) -> SchedulerView:
        """What a watching tool (the inspector) may read: asched.scheduler.views."""
        return Views(
            queue=self.queue,
            cache=self.cache,
            pods=self.pod_informer.store,
            frameworks=self.frameworks,
            clock=self.clock,
            ready=ready,
        )

    def observe(self, observer: CycleObserver) -> None:
        """Tell *observer* every decision and bind (the inspector's collector)."""
        self.scheduling_cycle.observer = observer
        self.group_cycle.observer = observer
        self.binding_cycle.observer = observer

    def _forest(self) -> GroupForest:
        return GroupForest(
            self._informer_for(NATIVE_POD_GROUPS).store,
            self._informer_for(COMPOSITE_POD_GROUPS).store,
        )

    def store(self, resource: str) -> Store[Any] | None:
        """The informer store of *resource* (an InformerRequest's), if one was started."""
        inf = self._stores.get(resource)
        return None if inf is None else inf.store

    def _informer_for(self, req: InformerRequest[Any]) -> Informer[Any]:
        inf = self._stores.get(req.resource)
        if inf is None:
            handler = ResourceHandler(
                req.event_resource,
                lambda: self.queue,
                functools.partial(self._object_invalid, _api_version(req.list_path)),
            )
            inf = Informer(
                self.client,
                req.list_path,
                req.decode,
                handler,
                clock=self.clock,
                optional=req.optional,
                name=req.resource,
            )
            self._stores[req.resource] = inf
        return inf

    def events_for(self, profile: str) -> EventRecorder:
        """The event recorder for one profile's events (reportingController = profile)."""
        return self._profile_events.get(profile, self.events)

    def _responsible(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.frameworks

    def _pre_enqueue(self, pod: Pod) -> tuple[str, Status] | None:
        fwk = self.frameworks.get(pod.scheduler_name)
        return None if fwk is None else fwk.run_pre_enqueue(pod)

    def skip_pod(self, pod: Pod) -> bool:
        """kube-scheduler skipPodSchedule: deleted, or already assumed/bound.

        A pod being deleted gets kube-scheduler's Warning event, FailedScheduling
        "skip schedule deleting pod: <ns>/<name>", from its profile.
        """
        current = self.pod_informer.store.get(pod.key)
        if current is None or current.uid != pod.uid:
            return True
        if current.deletion_timestamp is not None:
            self.events_for(current.scheduler_name).event(
                current,
                "Warning",
                "FailedScheduling",
                "Scheduling",
                f"skip schedule deleting pod: {current.namespace}/{current.name}",
            )
            return True
        return bool(current.node_name) or self.cache.is_assumed(pod.uid)

    def _pod_gone(self, pod: Pod) -> None:
        self.status_writer.forget(pod.uid)
        if self.wire_objects is not None:
            self.wire_objects.forget_pod(pod.key)
        for fwk in self.frameworks.values():
            fwk.waiting_pods.reject(pod.uid, "", "pod deleted")

    def _pod_invalid(self, key: str, err: DecodeError) -> None:
        ns, _, name = key.partition("/")
        log.error("pod_decode_failed", pod=key, field=err.field, error=err.message)
        self.events.event(
            _ObjRef("Pod", ns, name),
            "Warning",
            "FailedScheduling",
            "Scheduling",
            f"invalid pod: {err.field}: {err.message}",
        )

    def _object_invalid(self, api_version: str, key: str, err: DecodeError) -> None:
        """A watched object (a PodGroup, a Workload, ...) that cannot be read: a Warning
        Event on it names the field, so its owner sees why pods that need it wait."""
        ns, _, name = key.rpartition("/")
        self.events.event(
            _ObjRef(err.kind, ns, name, api_version=api_version),
            "Warning",
            "Invalid",
            "Decoding",
            f"invalid {err.kind}: {err.field}: {err.message}",
        )

    def informers(self) -> list[Informer[Any]]:
        """Every informer: nodes, pods, then those the plugins asked for."""
        return [self.node_informer, self.pod_informer, *self._stores.values()]


class _Services:
    """SchedulerServices for the framework runtime, backed by the components."""

    def __init__(self, sched: Components) -> None:
        self._s = sched

    @property
    def clock(self) -> Clock:
        return self._s.clock

    @property
    def client(self) -> KubeClient:
        return self._s.client

    @property
    def events(self) -> EventRecorder:
        return self._s.events

    @property
    def snapshot(self) -> SnapshotLister:
        return self._s.snapshot

    @property
    def parallelism(self) -> int:
        return self._s.options.parallelism

    @property
    def metrics(self) -> RuntimeMetrics | None:
        return self._s.metrics

    @property
    def extenders(self) -> PreemptionExtenders | None:
        """HasExtenders: what preemption asks (callExtenders)."""
        return self._s.extenders or None

    def store(self, request: InformerRequest[Any]) -> ObjectStore[Any]:
        store: ObjectStore[Any] = self._s._informer_for(request).store
        return store

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        return self._s.pod_view.pods_in_namespace(namespace)

    def pods_in_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._s.pod_view.pods_in_group(namespace, name)

    def pods_in_scheduling_group(self, namespace: str, name: str) -> Sequence[Pod]:
        return self._s.pod_view.pods_in_scheduling_group(namespace, name)

    def scheduling_group_size(self, namespace: str, name: str) -> int:
        return self._s.pod_view.scheduling_group_size(namespace, name)

    def scheduled_in_scheduling_group(self, namespace: str, name: str) -> int:
        return self._s.pod_view.scheduled_in_scheduling_group(namespace, name)

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._s.queue.nominator.nominated_pods_for_node(node_name)

    def has_nominated_pods(self) -> bool:
        return bool(len(self._s.queue.nominator))

    def activate(self, pods: Sequence[Pod]) -> None:
        self._s.queue.activate(pods)
