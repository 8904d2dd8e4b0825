"""`explain_pod`: read the cluster once, build the pod's profile, run one dry cycle.

Only GET requests leave this module (the pod, then nodes, pods and whatever the profile's
plugins watch); nothing is bound, no event is sent, no status is written.
"""

from __future__ import annotations

from dataclasses import replace

import structlog

from asched.api import DecodeError, decode_pod
from asched.app import scheduler_options
from asched.client.protocol import ApiError, KubeClient
from asched.config import SchedulerConfig
from asched.explain.dryrun import dry_run
from asched.explain.model import Explanation
from asched.explain.services import ExplainServices
from asched.explain.view import build_snapshot, fill_store, load_view
from asched.framework.registry import Registry
from asched.framework.runtime import Framework, ProfileSpec

log = structlog.get_logger(__name__)


class ExplainError(Exception):
    """The pod cannot be explained (not found, undecodable, no matching profile)."""


def pod_path(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


def profile_for(profiles: list[ProfileSpec], scheduler_name: str) -> ProfileSpec:
    for p in profiles:
        if p.scheduler_name == scheduler_name:
            return p
    names = ", ".join(p.scheduler_name for p in profiles)
    raise ExplainError(
        f"the pod's schedulerName {scheduler_name!r} matches no profile of the configuration "
        f"(profiles: {names}); pass the scheduler's --config"
    )


async def explain_pod(
    client: KubeClient,
    namespace: str,
    name: str,
    config: SchedulerConfig,
    registry: Registry,
) -> Explanation:

    try:
        raw = await client.request("GET", pod_path(namespace, name))
    except ApiError as err:
        if err.not_found:
            raise ExplainError(f"pod {namespace}/{name} not found") from None
        raise
    try:
        pod = decode_pod(raw)
    except DecodeError as err:
        raise ExplainError(
            f"pod {namespace}/{name} is invalid: {err.field}: {err.message}"
        ) from None
    options = scheduler_options(config)
    profile = profile_for(options.profiles, pod.scheduler_name)

    view = await load_view(client)
    # Explained as pending: a bound pod's own resources must not count against it.
    pending = replace(pod, node_name="")
    pods = [pending if p.uid == pod.uid else p for p in view.pods]
    snapshot = build_snapshot(view.nodes, pods, exclude_uid=pod.uid)
    services = ExplainServices(client, snapshot, pods, parallelism=options.parallelism)
    fwk = Framework(profile, registry, services)
    skipped = list(view.skipped)
    for request in fwk.informer_requests():
        store = services.store(request)
        if not store.has_synced():
            skipped += await fill_store(client, request, services.stores[request.resource])

    out = await dry_run(
        fwk,
        pending,
        snapshot.node_infos(),
        percentage_of_nodes_to_score=options.percentage_of_nodes_to_score,
    )
    out.bound_to = pod.node_name
    out.notes += [f"left out (does not decode): {s}" for s in skipped]
    out.notes += [
        f"event not sent (dry run): {e.event_type} {e.reason} {e.regarding}: {e.message}"
        for e in services.held.events
    ]
    log.debug(
        "pod_explained",
        pod=pod.key,
        profile=profile.scheduler_name,
        nodes=len(out.nodes),
        feasible=len(out.feasible),
        selected=out.selected,
    )
    return out


async def explain_as_dict(
    client: KubeClient, config: SchedulerConfig, registry: Registry, namespace: str, name: str
) -> dict[str, object]:
    """explain_pod's answer as `asched explain --output json` prints it, for the live
    inspector (asched.app's ExplainFactory); a pod that cannot be explained raises
    LookupError with explain's message."""
    try:
        out = await explain_pod(client, namespace, name, config, registry)
    except ExplainError as exc:
        raise LookupError(str(exc)) from None
    return out.to_dict()
