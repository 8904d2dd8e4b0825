"""Where the API server is and how to authenticate: a kubeconfig or the pod's service account.

Parsing kubeconfig files is a solved problem with many corners (merged $KUBECONFIG lists,
relative certificate paths, inline base64 data, exec credential plugins, OIDC), so this
module lets kubernetes_asyncio.config do it and converts the result into our own frozen
`Connection`, which is all RestClient needs. The generated kubernetes_asyncio API client
itself is never used on the hot path (see the performance notes in shared/perf.md).

Which source is used mirrors client-go's clientcmd.BuildConfigFromFlags as kube-scheduler
calls it: an explicit kubeconfig path wins; without one, the in-cluster service account is
used when the pod environment says we run in a cluster, else the default loading rules
($KUBECONFIG, then ~/.kube/config).

kubernetes_asyncio reads files, writes temporary certificate files and may run an exec
plugin while loading, partly with blocking calls, so loading runs on a worker thread with
its own event loop: the caller's loop never blocks.

Tokens that rotate on disk (bound service-account tokens, kubeconfig `tokenFile`) are
kept as a path in `Connection.token_file`; RestClient re-reads it periodically like
client-go's cached file token source. Tokens from exec plugins are read once at load time.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from asched.client.kubeconfig_shape import KubeconfigError, check_shape, existing_files

IN_CLUSTER_TOKEN_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
IN_CLUSTER_CA_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
_SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"
_SERVICE_PORT_ENV = "KUBERNETES_SERVICE_PORT"


@dataclass(frozen=True, slots=True)
class Connection:
    """Everything needed to open connections to one API server as one identity."""

    host: str  # scheme://host:port, no trailing slash
    # An SSLContext carrying the CA and client certificate; True means the system trust
    # store; False turns verification off (insecure-skip-tls-verify).
    tls: ssl.SSLContext | bool = True
    # A static Authorization header value ("Bearer ...", "Basic ..."); kept out of repr.
    authorization: str | None = field(default=None, repr=False)
    # A bearer token file re-read periodically; wins over `authorization` once read.
    token_file: Path | None = None
    ca_file: str | None = None
    client_cert_file: str | None = None
    client_key_file: str | None = None
    tls_server_name: str | None = None
    proxy: str | None = None

    @classmethod
    def from_token(
        cls, host: str, token: str, *, ca_pem: bytes | None = None, verify: bool = True
    ) -> Connection:
        """A bearer-token connection; *ca_pem*, when given, is the only trusted CA."""
        tls: ssl.SSLContext | bool
        if not verify:
            tls = False
        elif ca_pem is not None:
            tls = ssl.create_default_context(cadata=ca_pem.decode("ascii"))
        else:
            tls = True
        return cls(host=host.rstrip("/"), tls=tls, authorization=f"Bearer {token}")


def _tls_context(
    source: str,
    verify: bool,
    ca_file: str | None,
    cert_file: str | None,
    key_file: str | None,
) -> ssl.SSLContext | bool:
    if not verify and cert_file is None:
        return False
    # ssl's own messages ("[SSL] PEM lib (_ssl.c:3900)") name no file; these do.
    try:
        ctx = ssl.create_default_context(cafile=ca_file)
    except (ssl.SSLError, OSError) as exc:
        raise KubeconfigError(
            f"{source}: certificate-authority {ca_file}: not a readable PEM CA bundle: {exc}"
        ) from exc
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cert_file is not None:
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except (ssl.SSLError, OSError) as exc:
            raise KubeconfigError(
                f"{source}: client-certificate {cert_file} / client-key {key_file}: "
                f"not a readable PEM certificate and matching key: {exc}"
            ) from exc
    return ctx


def _from_configuration(cfg: Any, token_file: Path | None, source: str) -> Connection:
    host = str(cfg.host).rstrip("/")
    ca_file = cfg.ssl_ca_cert or None
    cert_file = cfg.cert_file or None
    key_file = cfg.key_file or None
    tls: ssl.SSLContext | bool = True
    if host.startswith("https://"):
        tls = _tls_context(source, bool(cfg.verify_ssl), ca_file, cert_file, key_file)
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


async def _load_kubeconfig(paths: str, context: str | None) -> Connection:
    from kubernetes_asyncio.client import Configuration
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader, KubeConfigMerger

    files = existing_files(paths)
    check_shape(files, context)
    merger = KubeConfigMerger(os.pathsep.join(files))
    if merger.config is None:
        raise KubeconfigError(f"kubeconfig {paths}: no such file")
    # persist_config stays off: asched never writes back to the user's kubeconfig.
    loader = KubeConfigLoader(
        config_dict=merger.config, config_base_path=None, active_context=context
    )
    cfg = Configuration()
    await loader.load_and_set(cfg)
    return _from_configuration(cfg, _user_token_file(merger, loader), f"kubeconfig {paths}")


def _load_kubeconfig_blocking(paths: str, context: str | None) -> Connection:
    try:
        return asyncio.run(_load_kubeconfig(paths, context))
    except KubeconfigError:
        raise
    except Exception as exc:
        # kubernetes_asyncio reports a bad file in many ways (ConfigException, ValueError,
        # binascii.Error for bad base64, ...); the shape was checked, so what is left
        # is about a value, and its message says which.
        raise KubeconfigError(f"kubeconfig {paths}: {exc}") from exc


def _load_in_cluster_blocking(token_file: Path, ca_file: Path) -> Connection:
    from kubernetes_asyncio.client import Configuration
    from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader

    cfg = Configuration()
    try:
        # Its own refresh hook is for its generated client; RestClient re-reads token_file.
        InClusterConfigLoader(
            token_filename=str(token_file), cert_filename=str(ca_file), try_refresh_token=False
        ).load_and_set(cfg)
    except Exception as exc:
        raise KubeconfigError(f"in-cluster config: not usable: {exc}") from exc
    return _from_configuration(cfg, token_file, "in-cluster config")


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
