from __future__ import annotations

import base64
from pathlib import Path

import yaml

from asched.localcluster.kubeconfig import render_kubeconfig, write_kubeconfig
from asched.localcluster.rest import ClusterClient


def test_render_with_ca() -> None:
    config = yaml.safe_load(
        render_kubeconfig("https://127.0.0.1:6443", "system:asched", "tok", ca_pem=b"PEM")
    )
    ctx = config["contexts"][0]
    assert config["current-context"] == ctx["name"]
    name = ctx["context"]["cluster"]
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == name)
    user = next(u["user"] for u in config["users"] if u["name"] == ctx["context"]["user"])
    assert cluster == {
        "server": "https://127.0.0.1:6443",
        "certificate-authority-data": base64.b64encode(b"PEM").decode(),
    }
    assert user == {"token": "tok"}
    assert ctx["context"]["user"] == "system:asched"


def test_render_without_ca_skips_verification() -> None:
    config = yaml.safe_load(render_kubeconfig("https://h:1", "u", "t"))
    assert config["clusters"][0]["cluster"]["insecure-skip-tls-verify"] is True


async def test_written_file_is_private_and_readable_by_rest_client(tmp_path: Path) -> None:
    path = await write_kubeconfig(tmp_path / "k", "https://127.0.0.1:1/", "u", "secret")
    assert path.stat().st_mode & 0o777 == 0o600
    client = await ClusterClient.from_kubeconfig(path)
    assert client.server == "https://127.0.0.1:1"
