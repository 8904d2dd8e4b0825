"""Runs a workload's resolved ops against a live cluster whose scheduler is running.

This is scheduler_perf's WorkloadExecutor (executor.go) over the API server instead of an
in-process scheduler: the ops run in order, each as upstream's run*Op does, with the same
namespaces (`namespace-<op index>` by default), the same waits (a createPods without
skipWaitToCompletion waits until its pods are scheduled; a barrier until the pods counted
for its namespaces are scheduled or attempted), the same 30 parallel pod creations
(runners.go CreatePod), and churn, deletions and skipWaitToCompletion work running in the
background until the workload ends. Its throughput collector samples once a second as
util.go throughputCollector does, and its SchedulingThroughput summary is upstream's.

Nodes are created as the templates say, without kwok's annotation: as in upstream's
integration cluster, no kubelet (nor kwok) writes pod or node status, so the scheduler sees
the same events; the templates whose pods get deleted set terminationGracePeriodSeconds 0.

Differences, each forced by running out of process:
- Labels of labelNodePrepareStrategy are set when a node is created rather than patched
  after it (the same round-robin assignment; no extra node update event).
- createPodGroups waits until the API lists the PodGroups, not the scheduler's informer.
- allocResourceClaims allocates with asched's port of the structured allocator
  (scheduler_perf/dra.py), since the Go one cannot be called; it only sets up the cluster.
"""

from __future__ import annotations

import math
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio
import anyio.abc
import structlog
import yaml

from asched.localcluster import ApiError, Applier, ClusterClient, JsonObject
from benchmarks.scheduler_perf.config import (
    AllocResourceClaims,
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePodGroups,
    CreatePods,
    DeletePods,
    Op,
    StartCollectingMetrics,
    StopCollectingMetrics,
    TestCase,
    Threshold,
    UpdateAny,
)
from benchmarks.scheduler_perf.dra import ClaimAllocationError, allocate_claims
from benchmarks.scheduler_perf.gotemplate import Template, Value
from benchmarks.scheduler_perf.podstore import PodRecord, PodStore, labels_match
from benchmarks.stats import mean_throughput
from benchmarks.workload import run_pool

log = structlog.get_logger(__name__)

POD_CREATE_WORKERS = 30  # runners.go CreatePod
NODE_CREATE_WORKERS = 30
SAMPLE_INTERVAL = 1.0  # util.go throughputSampleInterval
POLL_INTERVAL = 1.0  # waitUntilPodsScheduledInNamespace polls once a second
CREATE_RETRY_S = 20.0  # createAny's retry window
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"


class WorkloadError(RuntimeError):
    """An op failed as upstream's would (a timeout, an API error, a bad template)."""


def base_pod() -> JsonObject:
    """util.go makeBasePod with runners.go MakePodSpec: the pod without a template."""
    resources = {"cpu": "100m", "memory": "500Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "pod-"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10.2",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": resources, "requests": resources},
                }
            ]
        },
    }


def base_node(prefix: str) -> JsonObject:
    """util.go makeBaseNode: 110 pods, 4 CPU, 32Gi, Ready."""
    resources = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": prefix},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


class Templates:
    """Parsed template files, each parsed once however many objects it renders."""

    def __init__(self) -> None:
        self._parsed: dict[Path, Template] = {}

    def render(self, path: Path, env: Mapping[str, Value]) -> JsonObject:
        template = self._parsed.get(path)
        if template is None:
            template = Template.parse(path.name, path.read_text())
            self._parsed[path] = template
        text = template.render(env)
        obj = yaml.safe_load(text)
        if not isinstance(obj, dict):
            raise WorkloadError(f"{path.name}: rendered to {type(obj).__name__}, not an object")
        return obj


# -- the throughput collector ---------------------------------------------------------------


def summarize_throughput(samples: Sequence[float]) -> dict[str, float]:
    """throughputCollector.collect: mean and nearest-rank percentiles of the samples."""
    if not samples:
        return {}
    ordered = sorted(samples)
    n = len(ordered)

    def rank(q: int) -> float:
        return ordered[math.ceil(n * q / 100) - 1]

    return {
        "Average": sum(ordered) / n,
        "Perc50": rank(50),
        "Perc90": rank(90),
        "Perc95": rank(95),
        "Perc99": rank(99),
    }


@dataclass
class ThroughputCollector:
    """Counts pods of *namespaces* matching *selector* as they become scheduled, and
    samples the rate each second from the first tick that saw one (util.go run)."""

    name: str
    namespaces: frozenset[str]
    selector: Mapping[str, str]
    clock: Callable[[], float] = time.monotonic
    #: The scheduler's CPU seconds (NaN while it is not running), read at the first
    #: sampled tick and at every tick that takes a sample: CPU over the measured window.
    cpu: Callable[[], float] = lambda: math.nan
    scheduled: int = 0
    cpu_at_start: float = math.nan
    cpu_at_last: float = math.nan
    first_count: int = 0
    #: When each counted pod was seen bound (the side-by-side runner's pods/s mean).
    bind_times: list[float] = field(default_factory=list)
    #: Open the window at the first bind instead of the first tick that sees one.
    from_first_bind: bool = False
    samples: list[float] = field(default_factory=list)
    started_at: float = math.nan
    last_at: float = math.nan
    _last_count: int = 0
    _skipped: int = 0
    _started: bool = False

    def see(self, pod: PodRecord) -> None:
        if pod.namespace in self.namespaces and labels_match(pod.labels, self.selector):
            self.scheduled += 1
            self.bind_times.append(self.clock())
            if self.from_first_bind and not self._started:
                # Backlog mode: a restarted scheduler binds a burst from its backlog
                # before the next tick; upstream's rule (open at the first tick that sees
                # a pod) would leave the burst out. The first bind opens the window and,
                # as in the runner's (n - 1) / span, is itself not counted.
                self._started = True
                self._last_count = self.first_count = self.scheduled
                self.started_at = self.last_at = self.clock()
                self.cpu_at_start = self.cpu()

    def tick(self) -> None:
        now = self.clock()
        if self.scheduled == 0:
            return
        if not self._started:
            self._started = True
            self._last_count = self.first_count = self.scheduled
            self.started_at = self.last_at = now
            self.cpu_at_start = self.cpu()
            return
        new = self.scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        rate = new / (now - self.last_at)
        # Skipped ticks get the same rate as the tick that ends them.
        self.samples.extend([rate] * (self._skipped + 1))
        self._last_count = self.scheduled
        self._skipped = 0
        self.last_at = now
        self.cpu_at_last = self.cpu()

    @property
    def window_pods(self) -> int:
        """Pods scheduled between the first tick that saw one and the last sample."""
        return self._last_count - self.first_count

    async def run(self) -> None:
        while True:
            await anyio.sleep(SAMPLE_INTERVAL)
            self.tick()


@dataclass
class DataItem:
    """One result (util.go DataItem), with the threshold applied as applyThreshold does."""

    name: str
    metric: str
    data: dict[str, float]
    unit: str
    threshold: float
    passed: bool | None
    measured_pods: int
    window_s: float
    cpu_seconds: float
    #: How fast the measured pods were created (NaN: not by a createPods op).
    created_per_s: float = math.nan
    #: (bound - 1) / (last bind - first bind) of the measured pods, as the side-by-side
    #: runner reports pods/s (benchmarks.stats.mean_throughput).
    bind_window_pods_per_s: float = math.nan


def threshold_check(item_data: Mapping[str, float], threshold: Threshold) -> bool | None:
    """applyThreshold for SchedulingThroughput (None: no threshold, or no data)."""
    if threshold.value == 0 or threshold.metric != "SchedulingThroughput":
        return None
    value = item_data.get(threshold.data_bucket)
    if value is None:
        return False
    return value < threshold.value if threshold.expect_lower else value > threshold.value


# -- the executor -----------------------------------------------------------------------------


CpuReader = Callable[[], float]


class SchedulerControl(Protocol):
    """Stops and restarts the scheduler under test (backlog mode)."""

    async def stop(self) -> None:
        """Stop the scheduler; pods created meanwhile stay pending."""

    async def start(self) -> None:
        """Start it again and return once it is ready."""


class WorkloadExecutor:
    """Runs ops in order; background work lives in *tg* until the caller cancels it."""

    def __init__(
        self,
        client: ClusterClient,
        store: PodStore,
        case: TestCase,
        threshold: Threshold,
        tg: anyio.abc.TaskGroup,
        *,
        workload_name: str,
        scheduler_cpu: CpuReader,
        wait_timeout: float = 600.0,
        backlog: SchedulerControl | None = None,
    ) -> None:
        self.client = client
        self.store = store
        self.case = case
        self.threshold = threshold
        self.tg = tg
        self.workload_name = workload_name
        self.scheduler_cpu = scheduler_cpu
        self.wait_timeout = wait_timeout
        self.backlog = backlog
        self.applier = Applier(client)
        self.templates = Templates()
        self.pods_per_namespace: dict[str, int] = {}
        #: allocResourceClaims tries nodes in a random order, as upstream; seeded, so two
        #: schedulers' runs start from the same allocations.
        self.rng = random.Random(0)
        self.claims_allocated = 0
        self.next_node_index = 0
        self.data_items: list[DataItem] = []
        #: (pods, seconds) of every batch of creations: when the rate the pods were
        #: created at is the rate they were scheduled at, the harness was the limit.
        self.creation: list[tuple[int, float]] = []
        self._created_per_s = math.nan
        self._collector: ThroughputCollector | None = None
        self._collector_scope: anyio.CancelScope | None = None
        self._collector_stop: Callable[[], None] | None = None

    async def run(self, ops: Sequence[Op]) -> list[DataItem]:
        for index, op in enumerate(ops):
            try:
                await self.run_op(index, op)
            except (ApiError, WorkloadError, TimeoutError) as err:
                raise WorkloadError(f"op {index} ({type(op).__name__}): {err}") from err
        return self.data_items

    async def run_op(self, index: int, op: Op) -> None:
        if isinstance(op, CreateNodes):
            await self.create_nodes(index, op)
        elif isinstance(op, CreateNamespaces):
            await self.create_namespaces(op)
        elif isinstance(op, CreatePods):
            await self.create_pods(index, op)
        elif isinstance(op, DeletePods):
            await self.delete_pods(op)
        elif isinstance(op, Churn):
            await self.churn(index, op)
        elif isinstance(op, Barrier):
            await self.barrier(op)
        elif isinstance(op, CreatePodGroups):
            await self.create_podgroups(op)
        elif isinstance(op, CreateAny):
            await self.create_any(op)
        elif isinstance(op, UpdateAny):
            await self.update_any(op)
        elif isinstance(op, AllocResourceClaims):
            await self.alloc_resource_claims(op)
        elif isinstance(op, StartCollectingMetrics):
            self.start_collecting(
                op.name or f"op{index}", op.namespaces, op.label_selector, self.tg
            )
        elif isinstance(op, StopCollectingMetrics):
            self.stop_collecting()
        else:
            raise WorkloadError(f"cannot run {op!r}")

    # -- namespaces ------------------------------------------------------------------------

    async def ensure_namespace(self, name: str, spec: JsonObject | None = None) -> None:
        """createNamespaceIfNotPresent (an existing one is fine: churn shares them)."""
        if name in self.pods_per_namespace:
            return
        body = dict(spec or {})
        body["metadata"] = {**(body.get("metadata") or {}), "name": name}
        try:
            await self.client.post("/api/v1/namespaces", body)
        except ApiError as err:
            if err.status != 409:
                raise
        self.pods_per_namespace[name] = 0

    async def create_namespaces(self, op: CreateNamespaces) -> None:
        spec: JsonObject | None = None
        if op.namespace_template_path is not None:
            spec = yaml.safe_load(op.namespace_template_path.read_text())
        for i in range(op.count):
            await self.ensure_namespace(f"{op.prefix}-{i}", spec)

    # -- nodes -----------------------------------------------------------------------------

    async def create_nodes(self, index: int, op: CreateNodes) -> None:
        if op.node_allocatable_strategy is not None:
            raise WorkloadError("nodeAllocatableStrategy (CSINode objects) is not supported")
        label = op.label_node_prepare_strategy
        unique = op.unique_node_label_strategy
        bodies: list[JsonObject] = []
        for i in range(op.count):
            if op.node_template_path is None:
                node = base_node(f"node-{index}-")
            else:
                env = {**op.template_params, "Index": i, "Count": op.count}
                node = self.templates.render(op.node_template_path, env)
            meta = node.setdefault("metadata", {})
            labels = meta.setdefault("labels", {}) or {}
            meta["labels"] = labels
            if label is not None:
                values = label.get("labelValues") or label.get("LabelValues") or []
                key = label.get("labelKey") or label.get("LabelKey")
                labels[str(key)] = str(values[i % len(values)])
            if unique is not None:
                key = unique.get("labelKey") or unique.get("LabelKey")
                labels[str(key)] = f"{index}-{self.next_node_index + i}"
            bodies.append(node)

        async def create(body: JsonObject) -> None:
            for attempt in range(5):
                if not body["metadata"].get("name"):
                    # Ask for the generated name, then set the hostname label to it, as
                    # node_util.go PrepareNodes does (name = generateName + random).
                    name = body["metadata"]["generateName"] + secrets.token_hex(3)[:5]
                else:
                    name = body["metadata"]["name"]
                sent = {**body, "metadata": {**body["metadata"], "name": name}}
                sent["metadata"].pop("generateName", None)
                sent["metadata"]["labels"] = {
                    **body["metadata"]["labels"],
                    "kubernetes.io/hostname": name,
                }
                try:
                    await self.client.post("/api/v1/nodes", sent)
                    return
                except ApiError as err:
                    if err.status != 409 or attempt == 4:
                        raise

        await run_pool(bodies, create, NODE_CREATE_WORKERS)
        self.next_node_index += op.count

    # -- pods ------------------------------------------------------------------------------

    def pod_body(self, op: CreatePods, index: int) -> JsonObject:
        template = op.pod_template_path or self.case.default_pod_template_path
        if template is None:
            return base_pod()
        env = {**op.template_params, "Index": index, "Count": op.count}
        pod = self.templates.render(template, env)
        meta = pod.setdefault("metadata", {})
        labels = meta.get("labels") or {}
        # podTemplateWithParams.GetPodTemplate adds the signature label.
        labels["signature"] = f"signature-label-{index // max(1, op.signature_batch_size)}"
        meta["labels"] = labels
        return pod

    async def post_pods(self, namespace: str, op: CreatePods, indices: Sequence[int]) -> None:
        path = f"/api/v1/namespaces/{namespace}/pods"

        async def create(i: int) -> None:
            try:
                await self.client.post(path, self.pod_body(op, i))
            except ApiError as err:
                if err.status != 409:  # CreatePodWithRetries accepts AlreadyExists
                    raise

        began = time.monotonic()
        await run_pool(list(indices), create, POD_CREATE_WORKERS)
        seconds = time.monotonic() - began
        self.creation.append((len(indices), seconds))
        if len(indices) > 1:
            log.info(
                "pods_created",
                namespace=namespace,
                count=len(indices),
                per_second=round(len(indices) / seconds) if seconds > 0 else None,
            )

    async def create_pods(self, index: int, op: CreatePods) -> None:
        if op.persistent_volume_claim_template_path is not None:
            raise WorkloadError("pods with persistent volumes are not supported")
        namespace = op.namespace or f"namespace-{index}"
        await self.ensure_namespace(namespace)
        # Backlog mode: the measured pods are created while no scheduler runs, then it
        # restarts and works through them (the side-by-side runner's method), so the rate
        # this process creates pods at cannot bound the rate measured.
        backlog = self.backlog if op.collect_metrics and not op.steady_state else None
        if backlog is not None:
            await backlog.stop()
        if op.collect_metrics:
            self.start_collecting(namespace, (namespace,), {}, self.tg)
            if backlog is not None and self._collector is not None:
                self._collector.from_first_bind = True
        if op.steady_state:
            await self.create_pods_steadily(namespace, op)
        else:
            await self.post_pods(namespace, op, range(op.count))
            if op.collect_metrics:
                pods, seconds = self.creation[-1]
                self._created_per_s = pods / seconds if seconds > 0 else math.nan
            if backlog is not None:
                await backlog.start()
            if op.skip_wait_to_completion:
                self.pods_per_namespace[namespace] = (
                    self.pods_per_namespace.get(namespace, 0) + op.count
                )
            else:
                await self.wait_scheduled(namespace, {}, op.count)
        if op.collect_metrics:
            self.stop_collecting()

    async def create_pods_steadily(self, namespace: str, op: CreatePods) -> None:
        """createPodsSteadily: keep op.count pods; delete each once scheduled and create
        the next, for op.duration_s.

        Upstream replaces one pod at a time (delete, then create, then the next scheduled
        pod), which costs its in-process Go client a millisecond or two. This process's
        two round trips take tens of milliseconds on a loaded machine, so done one at a
        time they alone bounded the DRA steady-state workloads; each scheduled pod is
        replaced by its own task instead (at most op.count at once, the pods there are),
        and the ones still running when the time is up are cancelled, as upstream's
        context cancels its last calls."""
        send, receive = anyio.create_memory_object_stream[PodRecord](max(1, op.count) * 4)

        def scheduled(pod: PodRecord) -> None:
            if pod.namespace == namespace:
                try:
                    send.send_nowait(pod)
                except anyio.WouldBlock:
                    log.warning("steady_state_backlog", pod=pod.name)

        async def replace(pod: PodRecord, index: int) -> None:
            async with limit:
                await self.client.delete(
                    f"/api/v1/namespaces/{namespace}/pods/{pod.name}",
                    params={"gracePeriodSeconds": 0, "propagationPolicy": "Background"},
                )
                await self.post_pods(namespace, op, [index])

        limit = anyio.CapacityLimiter(max(1, op.count))
        remove = self.store.on_scheduled(scheduled)
        seen = 0
        try:
            await self.post_pods(namespace, op, range(op.count))
            async with anyio.create_task_group() as tg:
                with anyio.move_on_after(op.duration_s):
                    async with receive:
                        async for pod in receive:
                            tg.start_soon(replace, pod, op.count + seen)
                            seen += 1
                tg.cancel_scope.cancel()
        finally:
            remove()
            send.close()
        if seen == 0:
            raise WorkloadError("no pod at all got scheduled during the steady state")

    async def wait_scheduled(self, namespace: str, selector: Mapping[str, str], want: int) -> None:
        """waitUntilPodsScheduledInNamespace: poll once a second until *want* are bound
        (within the executor's wait timeout, upstream's 10 minutes by default)."""
        with anyio.move_on_after(self.wait_timeout) as scope:
            while True:
                scheduled, attempted, unattempted = self.store.census(namespace, selector)
                if len(scheduled) >= want:
                    return
                await anyio.sleep(POLL_INTERVAL)
        if scope.cancelled_caught:
            scheduled, attempted, unattempted = self.store.census(namespace, selector)
            waiting = attempted or unattempted
            detail = (
                f"; at least pod {namespace}/{waiting[0].name} is not scheduled" if waiting else ""
            )
            raise WorkloadError(
                f"timed out after {self.wait_timeout:.0f}s waiting for {want} pods in {namespace}, "
                f"{len(scheduled)} scheduled{detail}"
            )

    async def wait_attempted(self, namespace: str, selector: Mapping[str, str], want: int) -> None:
        with anyio.fail_after(self.wait_timeout):
            while True:
                scheduled, attempted, _ = self.store.census(namespace, selector)
                if len(scheduled) + len(attempted) >= want:
                    return
                await anyio.sleep(POLL_INTERVAL)

    async def barrier(self, op: Barrier) -> None:
        for namespace in op.namespaces:
            if namespace not in self.pods_per_namespace:
                raise WorkloadError(f"unknown namespace {namespace}")
        namespaces = list(op.namespaces) or list(self.pods_per_namespace)
        for namespace in namespaces:
            want = self.pods_per_namespace[namespace]
            if op.stage_requirement == "Attempted":
                await self.wait_attempted(namespace, op.label_selector, want)
            else:
                await self.wait_scheduled(namespace, op.label_selector, want)
        if op.stage_requirement != "Attempted":
            if op.namespaces:
                for namespace in op.namespaces:
                    self.pods_per_namespace.pop(namespace, None)
            else:
                self.pods_per_namespace.clear()

    async def delete_pods(self, op: DeletePods) -> None:
        victims = [
            p.name
            for p in self.store.pods.values()
            if p.namespace == op.namespace and labels_match(p.labels, op.label_selector)
        ]
        path = f"/api/v1/namespaces/{op.namespace}/pods"

        async def delete() -> None:
            if op.delete_pods_per_second > 0:
                for name in victims:
                    await anyio.sleep(1.0 / op.delete_pods_per_second)
                    try:
                        await self.client.delete(f"{path}/{name}")
                    except ApiError as err:
                        if err.status != 404:
                            raise
                return
            selector = ",".join(f"{k}={v}" for k, v in sorted(op.label_selector.items()))
            await self.client.delete(path, params={"labelSelector": selector} if selector else None)

        if op.skip_wait_to_completion:
            self.tg.start_soon(delete)
        else:
            await delete()

    # -- churn -------------------------------------------------------------------------------

    async def churn(self, index: int, op: Churn) -> None:
        """runChurnOp: every interval, create (mode create, up to number rounds) or
        create and later delete (mode recreate, number objects per template) each
        template's object, in the background until the workload ends."""
        namespace = op.namespace or f"namespace-{index}"
        try:
            await self.client.post("/api/v1/namespaces", {"metadata": {"name": namespace}})
        except ApiError as err:
            if err.status != 409:
                raise
        objects = [yaml.safe_load(p.read_text()) for p in op.template_paths]
        paths = [await self.applier.collection_path(obj, namespace) for obj in objects]
        interval = (op.interval_ms or 500) / 1000

        async def create(i: int) -> str:
            try:
                live = await self.client.post(paths[i], objects[i])
            except ApiError:
                return ""
            return str(live["metadata"]["name"])

        async def delete(i: int, name: str) -> None:
            try:
                await self.client.delete(f"{paths[i]}/{name}")
            except ApiError as err:
                if err.status != 404:
                    raise

        async def loop() -> None:
            rounds = 0
            limit = op.number or 2**31 - 1
            names = [[""] * max(1, op.number) for _ in objects]
            while op.mode == "recreate" or rounds < limit:
                await anyio.sleep(interval)
                for i in range(len(objects)):
                    if op.mode == "create":
                        await create(i)
                        continue
                    slot = rounds % op.number
                    if names[i][slot]:
                        await delete(i, names[i][slot])
                        names[i][slot] = ""
                    else:
                        names[i][slot] = await create(i)
                rounds += 1

        self.tg.start_soon(loop)

    # -- other objects -----------------------------------------------------------------------

    async def create_any(self, op: CreateAny) -> None:
        if op.namespace:
            await self.ensure_namespace(op.namespace)
        count = 1 if op.count is None else op.count
        for i in range(count):
            obj = self.templates.render(
                op.template_path, {**op.template_params, "Index": i, "Count": count}
            )
            path = await self.applier.collection_path(obj, op.namespace or None)
            namespaced = "/namespaces/" in path
            if bool(op.namespace) != namespaced:
                raise WorkloadError(
                    f"{op.template_path.name}: namespace {op.namespace!r} does not fit the "
                    f"scope of {obj.get('kind')}"
                )
            await self._create_with_retry(path, obj, op.template_path.name)

    async def _create_with_retry(self, path: str, obj: JsonObject, what: str) -> None:
        deadline = time.monotonic() + CREATE_RETRY_S
        while True:
            try:
                await self.client.post(path, obj, params={"fieldValidation": "Strict"})
                return
            except ApiError as err:
                if err.status in (400, 403, 422) or time.monotonic() > deadline:
                    raise WorkloadError(f"{what}: {err}") from err
            await anyio.sleep(1.0)

    async def update_any(self, op: UpdateAny) -> None:
        count = 1 if op.count is None else op.count

        async def update(i: int) -> None:
            obj = self.templates.render(op.template_path, {"Index": i, "Count": count})
            path = await self.applier.collection_path(obj, op.namespace or None)
            item = f"{path}/{obj['metadata']['name']}"
            suffix = "".join(f"/{s}" for s in op.subresources)
            await self.client.put(f"{item}{suffix}", obj, params={"fieldValidation": "Strict"})
            await self.client.put(f"{item}/status", obj, params={"fieldValidation": "Strict"})

        if op.namespace:
            await self.ensure_namespace(op.namespace)
        for i in range(count):
            if op.update_per_second > 0:
                await anyio.sleep(1.0 / op.update_per_second)
            await update(i)

    async def create_podgroups(self, op: CreatePodGroups) -> None:
        await self.ensure_namespace(op.namespace)
        path = PODGROUPS.format(ns=op.namespace)
        for i in range(op.count):
            obj = self.templates.render(op.template_path, {**op.template_params, "Index": i})
            await self._create_with_retry(path, obj, op.template_path.name)
        # The API lists them at once; upstream polls its informer for up to 10 s.
        listed = await self.client.list(path)
        if len(listed) < op.count:
            raise WorkloadError(f"{len(listed)} of {op.count} PodGroups listed in {op.namespace}")

    async def alloc_resource_claims(self, op: AllocResourceClaims) -> None:
        """dra.go allocResourceClaimsOp (benchmarks/scheduler_perf/dra.py)."""
        try:
            count = await allocate_claims(self.client, op.namespace, self.rng)
        except ClaimAllocationError as err:
            raise WorkloadError(str(err)) from err
        self.claims_allocated += count
        log.info("claims_allocated", namespace=op.namespace, count=count)

    # -- metrics -------------------------------------------------------------------------------

    def start_collecting(
        self,
        name: str,
        namespaces: Sequence[str],
        selector: Mapping[str, str],
        tg: anyio.abc.TaskGroup,
    ) -> None:
        if self._collector is not None:
            raise WorkloadError("metrics collection is overlapping")
        collector = ThroughputCollector(
            f"{self.case.name}/{self.workload_name}/{name}",
            frozenset(namespaces),
            selector,
            cpu=self.scheduler_cpu,
        )
        self._collector_stop = self.store.on_scheduled(collector.see)
        scope = anyio.CancelScope()

        async def sample() -> None:
            with scope:
                await collector.run()

        tg.start_soon(sample)
        self._collector = collector
        self._collector_scope = scope

    def stop_collecting(self) -> None:
        collector, scope, stop = self._collector, self._collector_scope, self._collector_stop
        if collector is None or scope is None or stop is None:
            raise WorkloadError("missing startCollectingMetrics operation before stopping")
        scope.cancel()
        stop()
        cpu = collector.cpu_at_last - collector.cpu_at_start
        data = summarize_throughput(collector.samples)
        window = collector.last_at - collector.started_at if collector.samples else math.nan
        measured = collector.window_pods
        self.data_items.append(
            DataItem(
                name=collector.name,
                metric="SchedulingThroughput",
                data=data,
                unit="pods/s",
                threshold=self.threshold.value,
                passed=threshold_check(data, self.threshold),
                measured_pods=measured,
                window_s=window,
                cpu_seconds=cpu,
                created_per_s=self._created_per_s,
                bind_window_pods_per_s=mean_throughput(collector.bind_times),
            )
        )
        self._created_per_s = math.nan
        self._collector = self._collector_scope = self._collector_stop = None
