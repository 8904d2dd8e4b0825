"""`asched run`: wire a configuration into a running scheduler.

Order of events: load and validate the config (a bad one stops here, naming the field) ->
load the kubeconfig -> check the serving flags and get the serving certificate (a bad
flag or certificate file stops here, naming it) -> start the ops server (/healthz,
/readyz, /metrics over HTTPS with delegated authn/authz, asched.server) -> wait up to
`api_server_wait` seconds for the API server to answer -> sync caches -> campaign for the
Lease (when leader election is on) -> schedule. A failure of any step up to the API
server's first answer is a StartupError (asched.base.errors), which the CLI reports in one
line with exit code 2. SIGTERM/SIGINT stop taking new pods, reject pods waiting at Permit,
let bindings in flight finish within the grace period (abandoning the rest), stop the
status and Event writers, then write the Events left within EVENTS_DRAIN_SECONDS, and exit
0; a second signal exits at once.
"""

from __future__ import annotations

import dataclasses
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog

from asched import gctune, malloctrim
from asched.base.clock import RealClock
from asched.base.errors import report_unexpected
from asched.client.kubeconfig import load_connection
from asched.client.probe import DEFAULT_WAIT, wait_for_api_server
from asched.client.protocol import KubeClient
from asched.client.rest import RestClient
from asched.config import ExtenderConfig, SchedulerConfig, load_config
from asched.extender import ExtenderSetupError
from asched.framework.registry import Registry
from asched.framework.runtime import ProfileSpec
from asched.inspector import Broadcaster, Collector, Inspector
from asched.inspector import routes as inspector_routes
from asched.inspector.collector import DEFAULT_RING_SIZE
from asched.leaderelection import LeaderElector
from asched.looplag import LoopLagMonitor
from asched.metrics import Metrics
from asched.plugins.noderesources.args import FitArgs
from asched.plugins.noderesources.fit import NAME as FIT
from asched.plugins.registry import in_tree_registry
from asched.recorder import EventRecorder
from asched.scheduler.compose import Options
from asched.scheduler.scheduler import Scheduler
from asched.server.ops import OpsServer
from asched.server.options import ServingOptions, serving_certificate, serving_gate
from asched.stalls import StallWatch

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class RunOptions:
    config: Path | None
    kubeconfig: str | None = None
    serving: ServingOptions = field(default_factory=ServingOptions)
    leader_elect: bool | None = None  # None: as the config says
    lease_namespace: str | None = None
    lease_name: str | None = None
    # Seconds to wait for the API server's first answer before giving up (StartupError).
    api_server_wait: float = DEFAULT_WAIT
    # False: no columnar fast path (`asched run --no-columnar`).
    columnar: bool = True
    # kube-scheduler's OpportunisticBatching gate (`--feature-gates`).
    opportunistic_batching: bool = True
    # > 0: report event-loop stalls longer than this (`--report-stalls-ms`, stalls.py).
    report_stalls_ms: float = 0.0
    # The live inspector at /inspector/ on the ops port (`--no-inspector` turns it off).
    inspector: bool = True
    # How many recent decisions it keeps (`--inspector-decisions`).
    inspector_decisions: int = DEFAULT_RING_SIZE
    # How the inspector explains a pod: asched.explain's explain_pod, given by the CLI
    # (the explain package sits above this module).
    explain: ExplainFactory | None = None
    # Called with the inspector's URL once the ops server listens (`asched inspect`).
    on_serving: Callable[[str], Coroutine[Any, Any, None]] | None = None


# (client, config, registry, namespace, name) -> the Explanation as a dict.
ExplainFactory = Callable[
    [KubeClient, SchedulerConfig, Registry, str, str], Awaitable[dict[str, object]]
]


def build_registry() -> Registry:
    """In-tree plugins plus every installed package's `asched.plugins` entry points."""
    registry = in_tree_registry()
    registry.load_entry_points()
    return registry


def load(path: Path | None, registry: Registry) -> SchedulerConfig:
    if path is None:
        from asched.config import default_config

        return default_config(registry)
    cfg = load_config(path, registry, filename=str(path))
    for warning in cfg.warnings:
        log.warning("config_deviation", file=str(path), detail=warning)
    return cfg


def scheduler_options(cfg: SchedulerConfig) -> Options:
    """The Scheduler's options from a loaded config; ExtenderSetupError when an extender's
    ignored resources cannot be handed to NodeResourcesFit."""
    profiles = [
        ProfileSpec(
            p.scheduler_name,
            {point: [(r.name, r.weight) for r in refs] for point, refs in p.plugins.items()},
            dict(p.plugin_args),
            p.percentage_of_nodes_to_score,
        )
        for p in cfg.profiles
    ]
    profiles = with_ignored_resources(profiles, cfg.extenders)
    return Options(
        parallelism=cfg.parallelism,
        percentage_of_nodes_to_score=cfg.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=float(cfg.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=float(cfg.pod_max_backoff_seconds),
        profiles=profiles,
        extenders=cfg.extenders,
    )


def with_ignored_resources(
    profiles: Sequence[ProfileSpec], configs: Sequence[ExtenderConfig]
) -> list[ProfileSpec]:
    """*profiles* with NodeResourcesFit's ignoredResources set as kube-scheduler's
    buildExtenders sets them: every managed resource marked ignoredByScheduler, replacing
    what the profile's pluginConfig said, so Filter does not refuse a node for lacking a
    resource the extender accounts for itself (unchanged when there is none). Here, where
    the profiles are built, because it names a plugin and the scheduler must not."""
    ignored = tuple(r.name for c in configs for r in c.managed_resources if r.ignored_by_scheduler)
    if not ignored:
        return list(profiles)
    out = []
    for p in profiles:
        args = p.plugin_args.get(FIT)
        if not isinstance(args, FitArgs):
            raise ExtenderSetupError(
                "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config"
            )
        plugin_args = {**p.plugin_args, FIT: dataclasses.replace(args, ignored_resources=ignored)}
        out.append(
            ProfileSpec(p.scheduler_name, p.plugins, plugin_args, p.percentage_of_nodes_to_score)
        )
    return out


async def run(opts: RunOptions) -> int:
    gctune.tune()
    registry = build_registry()
    cfg = load(opts.config, registry)
    kubeconfig = opts.kubeconfig or cfg.client_connection.kubeconfig or None
    clock = RealClock()
    connection = await load_connection(kubeconfig)
    opts.serving.validate()
    certificate = await serving_certificate(opts.serving, clock)
    cc = cfg.client_connection
    metrics = Metrics()

    # As kube-scheduler does, events and leader election get clients (and qps budgets) of
    # their own: event writes never slow bindings, and lease renewals never queue behind
    # thousands of bindings (a starved renewal loses leadership mid-run).
    def rest_client() -> RestClient:
        return RestClient(
            connection,
            qps=cc.qps,
            burst=cc.burst,
            clock=clock,
            content_type=cc.content_type,
            # Every routine request failure is counted by kind in one place.
            failures=metrics,
        )

    async with (
        rest_client() as client,
        rest_client() as event_client,
        rest_client() as lease_client,
        # TokenReviews and SubjectAccessReviews for the ops port: a scrape's answer never
        # waits behind bindings, and a flood of bad tokens spends this budget only.
        rest_client() as auth_client,
    ):
        # kube-scheduler's events client is built from the same clientConnection (qps,
        # burst) and the broadcaster adds no limit of its own (createClients,
        # NewEventBroadcasterAdapterWithContext), so every Scheduled event is written
        # at the client's rate; a tighter bucket here would drop them on busy clusters.
        recorder = EventRecorder(
            event_client,
            clock,
            reporting_controller="asched",
            metrics=metrics,
            qps=cc.qps,
            burst=cc.burst,
            # One writer per connection: fewer left Events behind the binds (broadcaster.py).
            writers=event_client.connections,
        )
        options = scheduler_options(cfg)
        options.columnar = opts.columnar
        options.opportunistic_batching = opts.opportunistic_batching
        options.on_synced = gctune.freeze_caches
        sched = Scheduler(client, registry, options, clock=clock, events=recorder, metrics=metrics)
        le = cfg.leader_election
        leader_elect = le.leader_elect if opts.leader_elect is None else opts.leader_elect
        elector = None
        if leader_elect:
            elector = LeaderElector(
                lease_client,
                namespace=opts.lease_namespace or le.resource_namespace,
                name=opts.lease_name or le.resource_name,
                lease_duration=le.lease_duration,
                renew_deadline=le.renew_deadline,
                retry_period=le.retry_period,
                clock=clock,
                errors=metrics,
            )
        pauses = gctune.GcPauses()
        sweeper = gctune.Sweeper(clock.now, idle=sched.idle)
        trimmer = malloctrim.Trimmer(clock.now)

        def on_tick() -> None:
            if trimmer.tick():
                metrics.malloc_trim(trimmer.last)
            started = time.perf_counter()
            found = sweeper.tick()
            if found is not None:
                metrics.gc_full_collection(found)
                seconds = round(time.perf_counter() - started, 4)
                log.info("gc_full_collection", unreachable=found, seconds=seconds)
            pauses.drain(metrics.gc_pause)

        lag = LoopLagMonitor(
            clock,
            observe=metrics.loop_lag,
            observe_net=metrics.loop_lag_net,
            on_tick=on_tick,
        )

        def readiness() -> tuple[bool, str]:
            return (True, "") if sched.ready else (False, "informer caches not synced")

        inspector = None
        routes = []
        if opts.inspector:
            collector = Collector(ring_size=opts.inspector_decisions)
            sched.observe(collector)
            inspector = Inspector(
                sched.view(), collector, Broadcaster(), loop_lag_p99=lambda: lag.p99
            )
            explain = opts.explain

            async def explain_pod(namespace: str, name: str) -> dict[str, object]:
                assert explain is not None
                return await explain(client, cfg, registry, namespace, name)

            routes = inspector_routes(inspector, explain_pod if explain is not None else None)

        server = OpsServer(
            metrics,
            readiness=readiness,
            host=opts.serving.host,
            port=opts.serving.secure_port,
            certificate=certificate,
            gate=serving_gate(opts.serving, auth_client, clock),
            routes=routes,
        )
        async with server:
            with pauses:
                # Outside the task group below: a StartupError raised inside one would reach
                # the CLI wrapped in an ExceptionGroup.
                await wait_for_api_server(client, connection.host, clock, wait=opts.api_server_wait)
                async with anyio.create_task_group() as tg:
                    log.info(
                        "asched_starting",
                        profiles=[p.scheduler_name for p in cfg.profiles],
                        ops=server.url,
                        leader_elect=leader_elect,
                        qps=cc.qps,
                        burst=cc.burst,
                    )
                    tg.start_soon(recorder.run)
                    tg.start_soon(server.watch_certificate)
                    tg.start_soon(lag.run)
                    if inspector is not None:
                        tg.start_soon(inspector.run)
                        if opts.on_serving is not None:
                            tg.start_soon(opts.on_serving, f"{server.url}/inspector/")
                    if opts.report_stalls_ms > 0:
                        tg.start_soon(StallWatch(opts.report_stalls_ms / 1e3).heartbeat)
                    tg.start_soon(_on_signals, sched, tg.cancel_scope)
                    # The shutdown order: sched.run returns once it stopped taking pods,
                    # rejected the pods waiting at Permit, let bindings finish (or abandoned
                    # them) within the grace period and stopped its status writers.
                    await sched.run(elector=elector)
                    await _drain_events(recorder, metrics)
                    tg.cancel_scope.cancel()
    log.info("asched_stopped")
    return 0


# How long the Events left at shutdown may take to write (kube-scheduler's broadcaster
# Shutdown waits for its queue without a bound; an unreachable API server must not hold
# the exit).
EVENTS_DRAIN_SECONDS = 5.0


async def _drain_events(recorder: EventRecorder, metrics: Metrics) -> None:
    """Stop the Event writers, then write what is left within EVENTS_DRAIN_SECONDS. A bug
    in it is reported, not raised: the Events are best effort, and an exception here
    would turn a clean shutdown into a traceback and a non-zero exit."""
    try:
        await recorder.drain(EVENTS_DRAIN_SECONDS)
    except Exception:
        report_unexpected(log, metrics, "event_recorder", "events_drain_crashed")


async def _on_signals(sched: Scheduler, scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            if sched.leading and not sched.stopping:
                log.info("shutdown_requested", signal=signal.Signals(signum).name)
                sched.shutdown()
            else:
                log.info("exiting", signal=signal.Signals(signum).name)
                scope.cancel()
                return
