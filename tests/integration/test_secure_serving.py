"""The ops port as kube-scheduler serves it, against the real API server's authn and authz.

asched runs as its own identity (system:asched, with manifests/rbac.yaml's
system:auth-delegator binding) and serves HTTPS; callers are ServiceAccounts of the test
namespace with real TokenRequest tokens, one of them bound to the metrics-reader
ClusterRole of manifests/examples/metrics-reader.yaml.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import orjson
import yaml

from asched.localcluster import ClusterClient
from asched.server.certgen import generate_self_signed
from tests.certs import ClientCA
from tests.cluster_fixtures import unique
from tests.integration.asched_proc import AschedProcess
from tests.integration.harness import AschedHarness
from tests.integration.helpers import poll

READER_ROLE = Path(__file__).parents[2] / "manifests" / "examples" / "metrics-reader.yaml"
VIEWER_ROLE = Path(__file__).parents[2] / "manifests" / "examples" / "inspector-viewer.yaml"


async def _service_account_token(admin: ClusterClient, namespace: str, name: str) -> str:
    await admin.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": name}}
    )
    request = await admin.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    token: str = request["status"]["token"]
    return token


def _service_account(namespace: str, sa: str) -> tuple[dict[str, str], str, list[str]]:
    """(binding subject, user name, groups) of a ServiceAccount."""
    user = f"system:serviceaccount:{namespace}:{sa}"
    subject = {"kind": "ServiceAccount", "name": sa, "namespace": namespace}
    return subject, user, ["system:serviceaccounts", "system:authenticated"]


@asynccontextmanager
async def _metrics_reader(
    admin: ClusterClient,
    subject: dict[str, str],
    user: str,
    groups: list[str],
    *,
    role_file: Path = READER_ROLE,
    path: str = "/metrics",
) -> AsyncIterator[None]:
    """The example ClusterRole of *role_file* (test-unique name) bound to *subject*, once
    the API server allows *path*; deleted afterwards."""
    docs = [d for d in yaml.safe_load_all(await anyio.Path(role_file).read_text()) if d]
    [role] = [d for d in docs if d["kind"] == "ClusterRole"]
    name = unique("asched-metrics-reader")
    role["metadata"]["name"] = name
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [subject],
    }
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    await admin.post(f"{rbac}/clusterroles", role)
    await admin.post(f"{rbac}/clusterrolebindings", binding)
    try:
        # RBAC reaches the authorizer asynchronously; a denial cached by asched meanwhile
        # would last 10 s, so wait until the API server itself says yes.

        async def allowed() -> bool | None:
            review = await admin.post(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SubjectAccessReview",
                    "spec": {
                        "user": user,
                        "groups": groups,
                        "nonResourceAttributes": {"path": path, "verb": "get"},
                    },
                },
            )
            return True if review["status"].get("allowed") else None

        with anyio.fail_after(30):
            await poll(allowed, interval=0.1)
        yield
    finally:
        await admin.delete(f"{rbac}/clusterrolebindings/{name}")
        await admin.delete(f"{rbac}/clusterroles/{name}")


async def _get(proc: AschedProcess, path: str, token: str | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with proc.http() as http, http.get(f"{proc.url}{path}", headers=headers) as resp:
        return resp.status, await resp.read()


def _status_message(body: bytes) -> tuple[int, str]:
    doc: dict[str, Any] = orjson.loads(body)
    assert doc["kind"] == "Status"
    return doc["code"], doc["message"]


async def test_metrics_need_a_token_the_api_server_vouches_for_and_a_right(
    asched: AschedHarness, admin: ClusterClient, namespace: str, tmp_path: Path
) -> None:
    # A serving pair of the test's own, so the client verifies the chain (no skip-verify).
    pair = generate_self_signed("localhost", ("127.0.0.1",))
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    client_ssl = ssl.create_default_context(cadata=pair.cert_pem.decode())
    reader = await _service_account_token(admin, namespace, "reader")
    stranger = await _service_account_token(admin, namespace, "stranger")
    flags = [
        f"--tls-cert-file={tmp_path / 'tls.crt'}",
        f"--tls-private-key-file={tmp_path / 'tls.key'}",
    ]

    async with (
        _metrics_reader(admin, *_service_account(namespace, "reader")),
        asched.run(args=flags, secure=True, ssl=client_ssl) as proc,
    ):
        assert proc.url.startswith("https://")
        no_token = await _get(proc, "/metrics")
        forged = await _get(proc, "/metrics", "not-a-token")
        denied = await _get(proc, "/metrics", stranger)
        allowed = await _get(proc, "/metrics", reader)
        healthz = await _get(proc, "/healthz")
        readyz = await _get(proc, "/readyz")
        # The reader may `get` /metrics and nothing else.
        other_path = await _get(proc, "/debug/anything", reader)
        async with (
            proc.http() as http,
            http.post(f"{proc.url}/metrics", headers={"Authorization": f"Bearer {reader}"}) as r,
        ):
            other_verb = r.status, await r.read()

    assert _status_message(no_token[1]) == (401, "Unauthorized")
    assert no_token[0] == forged[0] == 401
    assert denied[0] == 403
    assert _status_message(denied[1]) == (
        403,
        f'forbidden: User "system:serviceaccount:{namespace}:stranger" cannot get path "/metrics"',
    )
    assert allowed[0] == 200
    assert b"# TYPE scheduler_schedule_attempts_total counter" in allowed[1]
    assert healthz == (200, b"ok")
    assert readyz == (200, b"ok")
    assert other_path[0] == 403
    assert other_verb[0] == 403
    assert _status_message(other_verb[1])[1].startswith(
        f'forbidden: User "system:serviceaccount:{namespace}:reader" cannot post path "/metrics"'
    )


async def test_default_serving_is_https_with_a_generated_certificate(
    asched: AschedHarness,
) -> None:
    async with asched.run(secure=True) as proc:
        healthz = await _get(proc, "/healthz")
        metrics = await _get(proc, "/metrics")
        async with aiohttp.ClientSession() as http:
            try:
                async with http.get(f"http://127.0.0.1:{proc.port}/metrics") as resp:
                    plain: int | str = resp.status
            except aiohttp.ClientError as exc:
                plain = type(exc).__name__

    assert healthz == (200, b"ok")
    assert metrics[0] == 401
    # Plain HTTP to the HTTPS port never gets the metrics page.
    assert plain != 200


async def test_a_client_certificate_of_the_client_ca_authenticates_its_user(
    asched: AschedHarness, admin: ClusterClient, tmp_path: Path
) -> None:
    """kube-scheduler's --client-ca-file: the certificate's CommonName is the user the
    SubjectAccessReview asks about, its Organizations the groups."""
    ca = ClientCA()
    (tmp_path / "client-ca.crt").write_bytes(ca.pem)
    user = unique("cert-reader")
    cert, key = ca.issue(user, ("asched-test-scrapers",)).write(tmp_path, "reader")
    stranger = unique("cert-stranger")
    stranger_cert, stranger_key = ca.issue(stranger).write(tmp_path, "stranger")

    def client(cert_file: Path, key_file: Path) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the generated serving certificate
        ctx.load_cert_chain(cert_file, key_file)
        return ctx

    subject = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
    groups = ["asched-test-scrapers", "system:authenticated"]
    async with (
        _metrics_reader(admin, subject, user, groups),
        asched.run(
            args=[f"--client-ca-file={tmp_path / 'client-ca.crt'}"],
            secure=True,
            ssl=client(cert, key),
        ) as proc,
    ):
        allowed = await _get(proc, "/metrics")
        proc.ssl = client(stranger_cert, stranger_key)
        denied = await _get(proc, "/metrics")

    assert allowed[0] == 200
    assert b"# TYPE scheduler_schedule_attempts_total counter" in allowed[1]
    assert denied[0] == 403
    assert _status_message(denied[1]) == (
        403,
        f'forbidden: User "{stranger}" cannot get path "/metrics"',
    )


async def test_the_inspector_is_authorized_like_metrics_by_its_viewer_role(
    asched: AschedHarness, admin: ClusterClient, namespace: str
) -> None:
    viewer = await _service_account_token(admin, namespace, "viewer")
    reader = await _service_account_token(admin, namespace, "reader")
    async with (
        _metrics_reader(
            admin,
            *_service_account(namespace, "viewer"),
            role_file=VIEWER_ROLE,
            path="/inspector/",
        ),
        _metrics_reader(admin, *_service_account(namespace, "reader")),
        asched.run(secure=True) as proc,
    ):
        page = await _get(proc, "/inspector/", viewer)
        snapshot = await _get(proc, "/inspector/api/snapshot", viewer)
        no_token = await _get(proc, "/inspector/")
        metrics_reader = await _get(proc, "/inspector/", reader)
        viewer_metrics = await _get(proc, "/metrics", viewer)
    assert page[0] == 200
    assert b"asched inspector" in page[1]
    assert snapshot[0] == 200
    assert orjson.loads(snapshot[1])["queues"]["names"][0] == "active"
    assert _status_message(no_token[1]) == (401, "Unauthorized")
    # The two rights are separate: a metrics reader cannot look, a viewer cannot scrape.
    assert _status_message(metrics_reader[1]) == (
        403,
        f'forbidden: User "system:serviceaccount:{namespace}:reader" cannot get path "/inspector/"',
    )
    assert viewer_metrics[0] == 403
