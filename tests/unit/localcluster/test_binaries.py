from __future__ import annotations

import re
from pathlib import Path

import pytest

from asched.localcluster import binaries
from asched.localcluster.binaries import REQUIRED, default_bin_dir, find_binaries
from asched.localcluster.errors import BinariesNotFoundError

REPO = Path(__file__).resolve().parents[3]
TAG = "k8s-v1.37.2-etcd-v3.6.16-kwok-v0.8.0"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param(
            {"ASCHED_CACHE": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/c", id="cache"
        ),
        pytest.param({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/asched", id="xdg"),
        pytest.param({"HOME": "/h"}, "/h/.cache/asched", id="home"),
    ],
)
def test_default_bin_dir(env: dict[str, str], expected: str) -> None:
    assert default_bin_dir(env) == Path(expected) / "bin" / TAG


def test_versions_match_build_script() -> None:
    script = (REPO / binaries.BUILD_SCRIPT).read_text()
    pins = dict(re.findall(r"^(K8S_VERSION|ETCD_VERSION|KWOK_VERSION)=(\S+)$", script, re.M))
    assert pins == {
        "K8S_VERSION": binaries.K8S_VERSION,
        "ETCD_VERSION": binaries.ETCD_VERSION,
        "KWOK_VERSION": binaries.KWOK_VERSION,
    }


def test_env_override_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "etcd").write_text("")
    with pytest.raises(BinariesNotFoundError) as err:
        find_binaries(env={"ASCHED_BIN_DIR": str(tmp_path)})
    message = str(err.value)
    assert "hack/controlplane/build.sh" in message
    assert "kube-apiserver" in message
    assert "kwok-stages.yaml" in message
    assert "etcd," not in message


def test_complete_dir_is_found(tmp_path: Path) -> None:
    for name in REQUIRED:
        (tmp_path / name).write_text("")
    found = find_binaries(env={"ASCHED_BIN_DIR": str(tmp_path), "HOME": "/nonexistent"})
    assert found.kube_apiserver == tmp_path.resolve() / "kube-apiserver"
    assert find_binaries(tmp_path, env={}).dir == tmp_path.resolve()
