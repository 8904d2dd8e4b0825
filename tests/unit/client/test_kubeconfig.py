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
from tests.certs import ClientCA

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
    # The inline CA is in the context itself; no file was written for it.
    assert conn.ca_file is None
    assert conn.tls.get_ca_certs()
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


def test_static_credentials_do_not_import_kubernetes_asyncio(tmp_path: Path) -> None:
    """Its generated client costs ~40 MiB for the process's life: a token kubeconfig and
    the in-cluster path must load without it (a fresh interpreter, nothing preloaded)."""
    import subprocess
    import sys

    path = kubeconfig(
        tmp_path,
        cluster={"server": "https://127.0.0.1:6443", "certificate-authority-data": CA_DATA},
        user={"token": "t"},
    )
    code = (
        "import anyio, sys\n"
        "from asched.client.kubeconfig import load_kubeconfig\n"
        f"conn = anyio.run(load_kubeconfig, {str(path)!r})\n"
        "assert conn.authorization == 'Bearer t', conn\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubernetes_asyncio')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


async def test_client_certificate_data_and_relative_files(tmp_path: Path) -> None:
    ca = ClientCA()
    issued = ca.issue("system:kube-scheduler")
    (tmp_path / "pki").mkdir()
    cert_file, key_file = issued.write(tmp_path / "pki", "user")
    (tmp_path / "pki" / "ca.crt").write_bytes(CA_PEM)
    inline = kubeconfig(
        tmp_path,
        cluster={"server": "https://h:6443", "certificate-authority-data": CA_DATA},
        user={
            "client-certificate-data": base64.b64encode(issued.cert_pem).decode(),
            "client-key-data": base64.b64encode(issued.key_pem).decode(),
        },
    )

    conn = await load_kubeconfig(inline)

    assert isinstance(conn.tls, ssl.SSLContext)
    assert conn.authorization is None
    assert conn.client_cert_file is None

    # Relative paths resolve against the kubeconfig's own directory (clientcmd ResolvePaths).
    files = kubeconfig(
        tmp_path,
        cluster={"server": "https://h:6443", "certificate-authority": "pki/ca.crt"},
        user={"client-certificate": "pki/user.crt", "client-key": "pki/user.key"},
    )
    conn = await load_kubeconfig(files)

    assert isinstance(conn.tls, ssl.SSLContext)
    assert conn.ca_file == str(tmp_path / "pki" / "ca.crt")
    assert conn.client_cert_file == str(cert_file)
    assert conn.client_key_file == str(key_file)


@pytest.mark.parametrize(
    ("user", "message"),
    [
        pytest.param(
            {"client-certificate-data": CA_DATA},
            "users[name=u].user: client-certificate is set without its pair",
            id="certificate-without-key",
        ),
        pytest.param(
            {"client-key-data": "%%%"}, "users[name=u].client-key-data: not base64", id="bad-base64"
        ),
        pytest.param(
            {"tokenFile": "missing-token"},
            "users[name=u].user.tokenFile",
            id="missing-token-file",
        ),
    ],
)
async def test_bad_static_credentials_name_the_field(
    tmp_path: Path, user: dict[str, Any], message: str
) -> None:
    path = kubeconfig(tmp_path, cluster={"server": "https://h:6443"}, user=user)

    with pytest.raises(KubeconfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        await load_kubeconfig(path)


@pytest.mark.parametrize(
    ("cluster", "user"),
    [
        pytest.param({"server": "https://h:6443/"}, {"token": "a"}, id="token-system-ca"),
        pytest.param(
            {"server": "https://h:6443", "insecure-skip-tls-verify": True},
            {"username": "admin", "password": "pw"},
            id="basic-insecure",
        ),
        pytest.param(
            {
                "server": "https://h:6443",
                "certificate-authority-data": CA_DATA,
                "tls-server-name": "kubernetes.default",
                "proxy-url": "http://proxy:3128",
            },
            {"token": "a", "tokenFile": "ignored"},
            id="token-wins-server-name-proxy",
        ),
        pytest.param({"server": "http://h:8080"}, {"tokenFile": "tok"}, id="token-file"),
    ],
)
async def test_static_loader_agrees_with_kubernetes_asyncio(
    tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any]
) -> None:
    """The reference for static credentials is the loader asched used before (and still
    uses for exec and auth-provider users)."""
    from asched.client.kubeconfig import _load_with_plugin

    (tmp_path / "tok").write_text("from-file\n")
    path = kubeconfig(tmp_path, cluster=cluster, user=user)

    ours = await load_kubeconfig(path)
    theirs = await anyio.to_thread.run_sync(
        lambda: __import__("asyncio").run(_load_with_plugin([str(path)], None))
    )

    assert ours.host == theirs.host
    # client-go trims a token file's whitespace (kubernetes_asyncio keeps the newline).
    assert ours.authorization == (theirs.authorization or "").strip() or None
    assert ours.token_file == theirs.token_file
    assert type(ours.tls) is type(theirs.tls)
    if isinstance(ours.tls, ssl.SSLContext) and isinstance(theirs.tls, ssl.SSLContext):
        assert ours.tls.verify_mode == theirs.tls.verify_mode
        assert ours.tls.check_hostname == theirs.tls.check_hostname
    else:
        assert ours.tls == theirs.tls
    assert ours.proxy == theirs.proxy


async def test_in_cluster_ipv6_and_empty_token(
    service_account: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    token, ca = service_account
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")

    conn = await load_in_cluster(token, ca)

    assert conn.host == "https://[fd00::1]:443"
    token.write_text("")
    with pytest.raises(KubeconfigError, match=r"token file .*: empty"):
        await load_in_cluster(token, ca)
