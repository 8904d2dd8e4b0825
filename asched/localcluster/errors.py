"""Exceptions of the local control plane, one per way it can fail.

Callers (the CLI, pytest fixtures) catch these to print a useful message; everything else
that escapes is a bug.
"""

from __future__ import annotations


class ClusterError(Exception):
    """Base class of every local control-plane failure."""


class BinariesNotFoundError(ClusterError):
    """The etcd/kube-apiserver/kwok binaries are not built yet."""


class ClusterStartError(ClusterError):
    """A component exited early or did not become ready in time."""
