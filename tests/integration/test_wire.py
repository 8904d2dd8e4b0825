"""The wire against the real kube-apiserver: it accepts the protobuf writes, and what it
stores is what the same object sent as JSON stores; new connections resume TLS sessions."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

import pytest

from asched.client.kubeconfig import load_kubeconfig
from asched.client.protocol import ApiError
from asched.client.rest import RestClient
from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from tests.builders import make_pod
from tests.integration.conftest import NodeFactory

PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON = "application/json"


def _event(name: str, namespace: str, pod: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "eventTime": "2026-12-05T01:02:03.123456Z",
        "series": {"count": 3, "lastObservedTime": "2026-12-05T01:02:09.500000Z"},
        "reportingController": "asched",
        "reportingInstance": "asched-test",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "regarding": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": namespace,
            "name": pod["metadata"]["name"],
            "uid": pod["metadata"]["uid"],
            "resourceVersion": pod["metadata"]["resourceVersion"],
        },
        "note": "0/3 nodes are available: 3 Insufficient cpu. ünïcode",
        "type": "Warning",
    }


def _content(event: dict[str, Any]) -> dict[str, Any]:
    """An Event as stored, without what the server assigns or the name we chose."""
    meta = event["metadata"]
    return {
        **{k: v for k, v in event.items() if k != "metadata"},
        "metadata": {"namespace": meta["namespace"]},
    }


@contextlib.asynccontextmanager
async def _clients(cluster: LocalCluster) -> AsyncIterator[tuple[RestClient, RestClient]]:
    """(protobuf, JSON) clients with the scheduler's identity."""
    connection = await load_kubeconfig(cluster.scheduler_kubeconfig)
    async with (
        RestClient(connection, qps=-1, burst=0, content_type=PROTOBUF) as proto,
        RestClient(connection, qps=-1, burst=0, content_type=JSON) as plain,
    ):
        yield proto, plain


async def _pending_pod(admin: ClusterClient, namespace: str) -> dict[str, Any]:
    raw = make_pod("p", namespace).scheduler("nobody").raw()
    raw["metadata"].pop("uid", None)
    return await admin.post(f"/api/v1/namespaces/{namespace}/pods", raw)


async def test_protobuf_event_is_stored_as_the_json_one(
    cluster: LocalCluster, admin: ClusterClient, namespace: str
) -> None:
    async with _clients(cluster) as (proto, plain):
        pod = await _pending_pod(admin, namespace)
        events = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        await proto.request("POST", events, body=_event("via-protobuf", namespace, pod))
        await plain.request("POST", events, body=_event("via-json", namespace, pod))
        stored_proto = await admin.get(f"{events}/via-protobuf")
        stored_json = await admin.get(f"{events}/via-json")

    assert _content(stored_proto) == _content(stored_json)
    assert stored_proto["series"] == {"count": 3, "lastObservedTime": "2026-12-05T01:02:09.500000Z"}
    assert stored_proto["note"].endswith("ünïcode")


async def test_protobuf_binding_binds_and_its_conflict_reads_as_json_did(
    cluster: LocalCluster, admin: ClusterClient, kwok_nodes: NodeFactory, namespace: str
) -> None:
    node, other = await kwok_nodes([NodeSpec(name="a"), NodeSpec(name="b")])
    async with _clients(cluster) as (proto, plain):
        uid = (await _pending_pod(admin, namespace))["metadata"]["uid"]

        with pytest.raises(ApiError) as wrong_uid:
            await proto.bind(namespace, "p", "not-" + uid, node)
        await proto.bind(namespace, "p", uid, node)
        with pytest.raises(ApiError) as proto_again:
            await proto.bind(namespace, "p", uid, other)
        with pytest.raises(ApiError) as json_again:
            await plain.bind(namespace, "p", uid, other)
        bound = await admin.get(f"/api/v1/namespaces/{namespace}/pods/p")

    assert bound["spec"]["nodeName"] == node
    assert wrong_uid.value.status == 409
    assert "UID" in wrong_uid.value.message
    assert (proto_again.value.status, proto_again.value.reason, proto_again.value.message) == (
        json_again.value.status,
        json_again.value.reason,
        json_again.value.message,
    )
    assert proto_again.value.status == 409


async def test_new_connections_to_the_apiserver_resume_the_first_ones_tls_session(
    cluster: LocalCluster,
) -> None:
    connection = await load_kubeconfig(cluster.scheduler_kubeconfig)
    async with RestClient(connection, qps=-1, burst=0, connections=6) as client:
        await client.request("GET", "/version")
        # Six at once: the first connection is busy, so five more are opened.
        answers = await asyncio.gather(*(client.request("GET", "/version") for _ in range(6)))
        assert all(a["major"] == "1" for a in answers)
        pool = client._pool
        assert pool is not None
        reused = []
        for conn in pool._idle:
            # The pool does TLS itself (h1._Connection), over a plain transport.
            tls = conn.tls_object
            assert isinstance(tls, ssl.SSLObject)
            reused.append(tls.session_reused)
    # Go's server took the ticket from the first handshake on every later connection.
    assert len(reused) >= 2
    assert sorted(reused) == [False] + [True] * (len(reused) - 1)
