"""A Connection straight from a kubeconfig entry whose credentials are static.

Most kubeconfigs a scheduler runs with (the cluster's own scheduler.conf, a ServiceAccount
token, a client certificate) need nothing but a server, a CA, a token or a certificate.
kubernetes_asyncio's loader handles those too, but importing it imports its generated
client with every model (about 40 MiB of resident memory and 0.3 s of start-up that the
scheduler then keeps for its whole life, never using the client). So static credentials
are read here, with client-go's rules, and kubernetes_asyncio is imported only for the
users that need its machinery: `exec` credential plugins and `auth-provider`.

client-go rules followed (clientcmd's DirectClientConfig.ClientConfig and ResolvePaths):
- relative file paths are relative to the kubeconfig file that defines the entry;
- inline `-data` wins over the matching file field;
- a `token` wins over a `tokenFile`, which is kept for re-reading (a rotating token);
- `username`/`password` become a Basic authorization when no token is set.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
from pathlib import Path

from asched.client.connection import Connection, tls_context
from asched.client.kubeconfig_shape import Entry, KubeconfigError

# The user fields only kubernetes_asyncio's loader can turn into credentials.
DYNAMIC_USER_FIELDS = ("exec", "auth-provider")


def needs_plugin(user: Entry) -> bool:
    return any(user.body.get(k) for k in DYNAMIC_USER_FIELDS)


def static_connection(cluster: Entry, user: Entry) -> Connection:
    """The Connection for a cluster and a user without exec or auth-provider."""
    source = f"kubeconfig {cluster.file}"
    host = str(cluster.body.get("server") or "").rstrip("/")
    verify = not bool(cluster.body.get("insecure-skip-tls-verify"))
    ca_pem = _data_or_file(cluster, "certificate-authority")
    cert_pem = _data_or_file(user, "client-certificate")
    key_pem = _data_or_file(user, "client-key")
    if (cert_pem is None) != (key_pem is None):
        have = "client-certificate" if cert_pem is not None else "client-key"
        raise KubeconfigError(
            f"kubeconfig {user.file}: users[name={user.name}].user: {have} is set "
            "without its pair (client-certificate and client-key go together)"
        )
    tls: ssl.SSLContext | bool = True
    if host.startswith("https://"):
        tls = _context(source, verify, ca_pem, user, cert_pem=cert_pem, key_pem=key_pem)
    server_name = cluster.body.get("tls-server-name")
    authorization, token_file = _authorization(user)
    proxy = cluster.body.get("proxy-url")
    return Connection(
        host=host,
        tls=tls,
        authorization=authorization,
        token_file=token_file,
        ca_file=_path(cluster, "certificate-authority"),
        client_cert_file=_path(user, "client-certificate"),
        client_key_file=_path(user, "client-key"),
        tls_server_name=str(server_name) if server_name else None,
        proxy=str(proxy) if proxy else None,
    )


def _authorization(user: Entry) -> tuple[str | None, Path | None]:
    token = user.body.get("token")
    if token:
        return f"Bearer {token}", None
    token_path = _path(user, "tokenFile")
    if token_path is not None:
        try:
            text = Path(token_path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise KubeconfigError(
                f"kubeconfig {user.file}: users[name={user.name}].user.tokenFile "
                f"{token_path}: cannot read the token: {exc}"
            ) from exc
        return (f"Bearer {text}" if text else None), Path(token_path)
    username, password = user.body.get("username"), user.body.get("password")
    if username:
        basic = base64.b64encode(f"{username}:{password or ''}".encode()).decode("ascii")
        return f"Basic {basic}", None
    return None, None


def _path(entry: Entry, key: str) -> str | None:
    """A file field, made absolute against the defining file (clientcmd ResolvePaths)."""
    value = entry.body.get(key)
    if not value:
        return None
    path = Path(str(value)).expanduser()
    if not path.is_absolute():
        path = Path(entry.file).parent / path
    return str(path)


def _data_or_file(entry: Entry, key: str) -> bytes | None:
    """`<key>-data` (base64 PEM) if set, else the contents of the `<key>` file."""
    field = "users" if key.startswith("client") else "clusters"
    where = f"kubeconfig {entry.file}: {field}[name={entry.name}]"
    data = entry.body.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise KubeconfigError(f"{where}.{key}-data: not base64: {exc}") from exc
    path = _path(entry, key)
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise KubeconfigError(f"{where}.{key} {path}: cannot read: {exc.strerror or exc}") from exc


def _context(
    source: str,
    verify: bool,
    ca_pem: bytes | None,
    user: Entry,
    *,
    cert_pem: bytes | None,
    key_pem: bytes | None,
) -> ssl.SSLContext | bool:
    if cert_pem is None or key_pem is None:
        return tls_context(source, verify, ca_pem=ca_pem)
    cert_path, key_path = _path(user, "client-certificate"), _path(user, "client-key")
    if not user.body.get("client-certificate-data") and not user.body.get("client-key-data"):
        # Both from files: load them where they are, so errors name them.
        return tls_context(source, verify, ca_pem=ca_pem, cert_file=cert_path, key_file=key_path)
    # ssl loads a certificate chain from files only: inline data goes through a private
    # directory that lives just as long as the load.
    with tempfile.TemporaryDirectory(prefix="asched-cred-") as tmp:
        cert_file, key_file = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        for name, pem in ((cert_file, cert_pem), (key_file, key_pem)):
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
        return tls_context(source, verify, ca_pem=ca_pem, cert_file=cert_file, key_file=key_file)
