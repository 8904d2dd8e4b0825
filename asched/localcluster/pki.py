"""Key material kube-apiserver needs before it can start.

Only the service-account signing key is ours to make: kube-apiserver generates its own
self-signed serving certificate in ``--cert-dir``, and etcd serves plain HTTP on loopback.
The key is made with the ``openssl`` binary, run as an async subprocess so the event loop
never blocks (the ``cryptography`` package would pull in a dependency tree for one key).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio

from asched.localcluster.errors import ClusterStartError


async def generate_rsa_key(path: Path, bits: int = 2048) -> Path:
    """Write a PEM RSA private key to *path* (mode 0600) and return *path*."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ClusterStartError("`openssl` is needed to create the service-account key")
    result = await anyio.run_process(
        [openssl, "genrsa", "-out", str(path), str(bits)],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if result.returncode != 0:
        raise ClusterStartError(
            f"openssl genrsa failed ({result.returncode}): {result.stderr.decode(errors='replace')}"
        )
    await anyio.Path(path).chmod(0o600)
    return path
