"""Find the control-plane binaries that ``hack/controlplane/build.sh`` leaves in its cache.

The binaries are built once per version into a cache outside the checkout, because a cold
build takes many minutes. This module repeats the script's path logic (and its version
pins) so that Python finds exactly the directory the script printed; a unit test keeps the
two in step. It never builds anything: a missing binary is an error that says how to build.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from asched.localcluster.errors import BinariesNotFoundError

K8S_VERSION = "v1.37.2"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.8.0"

BUILD_SCRIPT = "hack/controlplane/build.sh"

#: Files a LocalCluster cannot start without.
REQUIRED = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok", "kwok-stages.yaml")


@dataclass(frozen=True, slots=True)
class Binaries:
    """Absolute paths of the control-plane executables and kwok's stage file."""

    dir: Path

    @property
    def etcd(self) -> Path:
        return self.dir / "etcd"

    @property
    def kube_apiserver(self) -> Path:
        return self.dir / "kube-apiserver"

    @property
    def kube_controller_manager(self) -> Path:
        return self.dir / "kube-controller-manager"

    @property
    def kube_scheduler(self) -> Path:
        """Not needed by LocalCluster; benchmarks run it beside asched."""
        return self.dir / "kube-scheduler"

    @property
    def kwok(self) -> Path:
        return self.dir / "kwok"

    @property
    def kwok_stages(self) -> Path:
        return self.dir / "kwok-stages.yaml"


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$ASCHED_CACHE``, else ``$XDG_CACHE_HOME/asched``, else ``~/.cache/asched``."""
    env = os.environ if env is None else env
    if env.get("ASCHED_CACHE"):
        return Path(env["ASCHED_CACHE"])
    xdg = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(xdg) / "asched"


def default_bin_dir(env: Mapping[str, str] | None = None) -> Path:
    """The versioned directory build.sh writes to."""
    tag = f"k8s-{K8S_VERSION}-etcd-{ETCD_VERSION}-kwok-{KWOK_VERSION}"
    return cache_dir(env) / "bin" / tag


def find_binaries(bin_dir: Path | None = None, env: Mapping[str, str] | None = None) -> Binaries:
    """Locate the binaries: *bin_dir*, else ``$ASCHED_BIN_DIR``, else the build cache.

    Raises BinariesNotFoundError naming every missing file and the command that builds them.
    """
    env = os.environ if env is None else env
    if bin_dir is None:
        override = env.get("ASCHED_BIN_DIR")
        bin_dir = Path(override) if override else default_bin_dir(env)
    missing = [name for name in REQUIRED if not (bin_dir / name).is_file()]
    if missing:
        raise BinariesNotFoundError(
            f"control-plane binaries missing in {bin_dir}: {', '.join(missing)}. "
            f"Build them with `{BUILD_SCRIPT}` (10-25 min the first time, cached after), "
            "or point ASCHED_BIN_DIR at a directory that holds them."
        )
    return Binaries(bin_dir.resolve())
