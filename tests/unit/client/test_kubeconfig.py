"""Connection settings from kubeconfig files and from the in-cluster service account."""

from __future__ import annotations

import base64
import json
import ssl
from pathlib import Path
from typing import Any

import anyio
import certifi
import pytest
import yaml

from asched.client.kubeconfig import (
    Connection,
    KubeconfigError,
    load_connection,
    load_in_cluster,
    load_kubeconfig,
)

# Any valid PEM bundle will do as a CA; certifi's is at hand.
CA_PEM = Path(certifi.where()).read_bytes()
CA_DATA = base64.b64encode(CA_PEM).decode()


def kubeconfig(
    tmp_path: Path,
    *,
    cluster: dict[str, Any],
    user: dict[str, Any],
    extra_contexts: list[dict[str, Any]] | None = None,
) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c", "cluster": cluster},
            {"name": "other", "cluster": {"server": "http://other:8080"}},
        ],
        "users": [{"name": "u", "user": user}, {"name": "o", "user": {"token": "other-token"}}],
        "contexts": [
            {"name": "main", "context": {"cluster": "c", "user": "u"}},
            {"name": "second", "context": {"cluster": "other", "user": "o"}},
            *(extra_contexts or []),
        ],
        "current-context": "main",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


async def test_token_and_ca_data(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path,
        cluster={"server": "https://127.0.0.1:6443/", "certificate-authority-data": CA_DATA},
        user={"token": "s3cret"},
    )

    conn = await load_kubeconfig(path)

    assert conn.host == "https://127.0.0.1:6443"
    assert conn.authorization == "Bearer s3cret"
    assert conn.token_file is None
    assert isinstance(conn.tls, ssl.SSLContext)
    assert conn.tls.verify_mode == ssl.CERT_REQUIRED
    assert conn.tls.check_hostname
    assert conn.ca_file is not None
    assert await anyio.Path(conn.ca_file).read_bytes() == CA_PEM
    assert "s3cret" not in repr(conn)


@pytest.mark.parametrize(
    ("cluster", "expected_tls"),
    [
        pytest.param(
            {"server": "https://h:6443", "insecure-skip-tls-verify": True},
            False,
            id="insecure-skip-tls-verify",
        ),
        pytest.param({"server": "http://h:8080"}, True, id="plain-http"),
    ],
)
async def test_tls_flags(tmp_path: Path, cluster: dict[str, Any], expected_tls: bool) -> None:
    conn = await load_kubeconfig(kubeconfig(tmp_path, cluster=cluster, user={"token": "t"}))

    assert conn.tls is expected_tls


async def test_relative_token_file_is_kept_for_rereading(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("first\n")
    path = kubeconfig(tmp_path, cluster={"server": "http://h:8080"}, user={"tokenFile": "tok"})

    conn = await load_kubeconfig(path)

    assert conn.token_file == tmp_path / "tok"
    assert conn.authorization is not None
    assert conn.authorization.startswith("Bearer first")


async def test_named_context(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, cluster={"server": "http://h:8080"}, user={"token": "t"})

    conn = await load_kubeconfig(path, context="second")

    assert (conn.host, conn.authorization) == ("http://other:8080", "Bearer other-token")


async def test_exec_plugin_token(tmp_path: Path) -> None:
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": "from-exec"},
    }
    script = tmp_path / "cred.sh"
    script.write_text(f"#!/bin/sh\necho '{json.dumps(credential)}'\n")
    script.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": str(script)}}
    path = kubeconfig(tmp_path, cluster={"server": "http://h:8080"}, user=user)

    conn = await load_kubeconfig(path)

    assert conn.authorization == "Bearer from-exec"


@pytest.mark.parametrize(
    "content",
    [pytest.param(None, id="missing-file"), pytest.param("clusters: [", id="not-yaml")],
)
async def test_unusable_kubeconfig(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content)

    with pytest.raises(KubeconfigError):
        await load_kubeconfig(path)


@pytest.fixture
def service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_bytes(CA_PEM)
    return token, ca


async def test_in_cluster(service_account: tuple[Path, Path]) -> None:
    token, ca = service_account

    conn = await load_in_cluster(token, ca)

    assert conn.host == "https://10.96.0.1:443"
    assert conn.authorization == "Bearer sa-token"
    assert conn.token_file == token
    assert isinstance(conn.tls, ssl.SSLContext)


async def test_in_cluster_without_environment(
    service_account: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")

    with pytest.raises(KubeconfigError):
        await load_in_cluster(*service_account)


async def test_explicit_kubeconfig_wins_over_in_cluster(
    tmp_path: Path, service_account: tuple[Path, Path]
) -> None:
    path = kubeconfig(tmp_path, cluster={"server": "http://h:8080"}, user={"token": "t"})

    conn = await load_connection(path)

    assert conn.host == "http://h:8080"


def test_from_token() -> None:
    conn = Connection.from_token("https://h:6443/", "abc", ca_pem=CA_PEM)

    assert (conn.host, conn.authorization) == ("https://h:6443", "Bearer abc")
    assert isinstance(conn.tls, ssl.SSLContext)
    assert Connection.from_token("https://h", "abc", verify=False).tls is False
