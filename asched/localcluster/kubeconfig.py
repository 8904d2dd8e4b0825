"""Write kubeconfig files for the identities of a local cluster.

kubectl, kube-controller-manager, kwok, kube-scheduler and asched itself all take a
kubeconfig, so each identity gets one file. Rendering is pure (unit-tested); only writing
touches the disk. The serving certificate that kube-apiserver generated for itself is
embedded as the CA, so clients verify TLS instead of skipping verification.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import yaml

CONTEXT = "asched-local"


def render_kubeconfig(server: str, user: str, token: str, *, ca_pem: bytes | None = None) -> str:
    """A single-context kubeconfig authenticating with a bearer token.

    Without *ca_pem* the file says ``insecure-skip-tls-verify: true``.
    """
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    else:
        cluster["insecure-skip-tls-verify"] = True
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user}}],
        "current-context": CONTEXT,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


async def write_kubeconfig(
    path: Path, server: str, user: str, token: str, *, ca_pem: bytes | None = None
) -> Path:
    """Write the kubeconfig with mode 0600 (it holds a bearer token) and return *path*."""
    apath = anyio.Path(path)
    await apath.write_text(render_kubeconfig(server, user, token, ca_pem=ca_pem))
    await apath.chmod(0o600)
    return path
