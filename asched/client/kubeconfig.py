"""Where the API server is and how to authenticate: a kubeconfig or the pod's service account.

Every source ends in our own frozen `Connection`, which is all RestClient needs. Static
credentials (a token, a token file, a client certificate, basic auth) and the in-cluster
service account are read by asched itself (asched.client.static_credentials), with
client-go's rules; only users with an `exec` credential plugin or an `auth-provider` go
through kubernetes_asyncio.config, whose import brings its whole generated client (about
40 MiB resident for the process's life), so the usual scheduler never pays for it.

Which source is used mirrors client-go's clientcmd.BuildConfigFromFlags as kube-scheduler
calls it: an explicit kubeconfig path wins; without one, the in-cluster service account is
used when the pod environment says we run in a cluster, else the default loading rules
($KUBECONFIG, then ~/.kube/config).

Loading reads files and may run an exec plugin, with blocking calls, so it runs on a
worker thread (kubernetes_asyncio's with its own event loop): the caller's loop never
blocks.

Tokens that rotate on disk (bound service-account tokens, kubeconfig `tokenFile`) are
kept as a path in `Connection.token_file`; RestClient re-reads it periodically like
client-go's cached file token source. Tokens from exec plugins are read once at load time.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from pathlib import Path
from typing import Any

import anyio

from asched.client.connection import Connection, tls_context
from asched.client.kubeconfig_shape import KubeconfigError, check_shape, existing_files
from asched.client.static_credentials import needs_plugin, static_connection

__all__ = [
    "Connection",
    "KubeconfigError",
    "in_cluster",
    "load_connection",
    "load_in_cluster",
    "load_kubeconfig",
]

IN_CLUSTER_TOKEN_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
IN_CLUSTER_CA_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
_SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"
_SERVICE_PORT_ENV = "KUBERNETES_SERVICE_PORT"


def _from_configuration(cfg: Any, token_file: Path | None, source: str) -> Connection:
    host = str(cfg.host).rstrip("/")
    ca_file = cfg.ssl_ca_cert or None
    cert_file = cfg.cert_file or None
    key_file = cfg.key_file or None
    tls: ssl.SSLContext | bool = True
    if host.startswith("https://"):
        tls = tls_context(
            source, bool(cfg.verify_ssl), ca_file=ca_file, cert_file=cert_file, key_file=key_file
        )
    authorization = cfg.api_key.get("BearerToken") or None
    return Connection(
        host=host,
        tls=tls,
        authorization=authorization,
        token_file=token_file,
        ca_file=ca_file,
        client_cert_file=cert_file,
        client_key_file=key_file,
        tls_server_name=getattr(cfg, "tls_server_name", None) or None,
        proxy=cfg.proxy or None,
    )


def _user_token_file(merger: Any, loader: Any) -> Path | None:
    """The current user's `tokenFile` when it has no inline `token` (which would win)."""
    context = loader.current_context or {}
    user_name = (context.get("context") or {}).get("user")
    if not user_name or merger.config is None or merger.config.safe_get("users") is None:
        return None
    entry = merger.config["users"].get_with_name(user_name, safe=True)
    if entry is None:
        return None
    user = entry["user"]
    if "token" in user or "tokenFile" not in user:
        return None
    token_file = Path(str(user["tokenFile"])).expanduser()
    if not token_file.is_absolute() and entry.path:
        token_file = Path(entry.path).parent / token_file
    return token_file


async def _load_with_plugin(files: list[str], context: str | None) -> Connection:
    """kubernetes_asyncio's loader, for users with `exec` or `auth-provider`."""
    from kubernetes_asyncio.client import Configuration
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader, KubeConfigMerger

    merger = KubeConfigMerger(os.pathsep.join(files))
    if merger.config is None:
        raise KubeconfigError(f"kubeconfig {os.pathsep.join(files)}: no such file")
    # persist_config stays off: asched never writes back to the user's kubeconfig.
    loader = KubeConfigLoader(
        config_dict=merger.config, config_base_path=None, active_context=context
    )
    cfg = Configuration()
    await loader.load_and_set(cfg)
    return _from_configuration(
        cfg, _user_token_file(merger, loader), f"kubeconfig {os.pathsep.join(files)}"
    )


def _load_kubeconfig_blocking(paths: str, context: str | None) -> Connection:
    files = existing_files(paths)
    selected = check_shape(files, context)
    if not needs_plugin(selected.user):
        return static_connection(selected.cluster, selected.user)
    try:
        return asyncio.run(_load_with_plugin(files, context))
    except KubeconfigError:
        raise
    except Exception as exc:
        # kubernetes_asyncio reports a bad file in many ways (ConfigException, ValueError,
        # binascii.Error for bad base64, ...); the shape was checked, so what is left
        # is about a value, and its message says which.
        raise KubeconfigError(f"kubeconfig {paths}: {exc}") from exc


def _load_in_cluster_blocking(token_file: Path, ca_file: Path) -> Connection:
    """client-go's rest.InClusterConfig: the service's host and port from the environment,
    the ServiceAccount token (kept as a file: it rotates) and the cluster CA."""
    host, port = os.environ.get(_SERVICE_HOST_ENV), os.environ.get(_SERVICE_PORT_ENV)
    if not host or not port:
        raise KubeconfigError(
            f"in-cluster config: {_SERVICE_HOST_ENV} and {_SERVICE_PORT_ENV} must be set"
        )
    if ":" in host:  # an IPv6 address (net.JoinHostPort)
        host = f"[{host}]"
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise KubeconfigError(f"in-cluster config: token file {token_file}: {exc}") from exc
    if not token:
        raise KubeconfigError(f"in-cluster config: token file {token_file}: empty")
    source = "in-cluster config"
    tls = tls_context(source, True, ca_file=str(ca_file))
    return Connection(
        host=f"https://{host}:{port}",
        tls=tls,
        authorization=f"Bearer {token}",
        token_file=token_file,
        ca_file=str(ca_file),
    )


async def load_kubeconfig(path: str | Path | None = None, context: str | None = None) -> Connection:
    """Connection for *context* (default: current-context) of a kubeconfig.

    *path* may be a colon-separated list like $KUBECONFIG; None means $KUBECONFIG, then
    ~/.kube/config. Raises KubeconfigError.
    """
    if path is None:
        path = os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
    return await anyio.to_thread.run_sync(_load_kubeconfig_blocking, str(path), context)


async def load_in_cluster(
    token_file: Path = IN_CLUSTER_TOKEN_FILE, ca_file: Path = IN_CLUSTER_CA_FILE
) -> Connection:
    """Connection from the pod's service account (KUBERNETES_SERVICE_HOST/PORT, token, CA)."""
    return await anyio.to_thread.run_sync(_load_in_cluster_blocking, token_file, ca_file)


def in_cluster() -> bool:
    return bool(os.environ.get(_SERVICE_HOST_ENV) and os.environ.get(_SERVICE_PORT_ENV))


async def load_connection(
    kubeconfig: str | Path | None = None, context: str | None = None
) -> Connection:
    """The connection kube-scheduler would use for `--kubeconfig` (empty: in-cluster)."""
    if kubeconfig is None and in_cluster():
        return await load_in_cluster()
    return await load_kubeconfig(kubeconfig, context)
