"""Integration tests use the session's control plane from tests/cluster_fixtures.py, and
start asched on it through the `asched` fixture (tests/integration/harness.py).

Names are re-exported for the test modules that import them from here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.localcluster import ClusterClient, LocalCluster
from tests.cluster_fixtures import SKIP_ENV, NodeFactory, unique
from tests.integration.harness import AschedHarness

__all__ = ["SKIP_ENV", "NodeFactory", "unique"]


@pytest.fixture
def asched(
    cluster: LocalCluster, admin: ClusterClient, namespace: str, tmp_path: Path
) -> AschedHarness:
    """asched processes on the session cluster for this test, and its namespace's pods and
    Events as the API server has them (the same `admin` and `namespace` the test sees)."""
    return AschedHarness(cluster, admin, namespace, tmp_path)
