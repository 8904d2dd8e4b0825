"""Integration tests use the session's control plane from tests/cluster_fixtures.py, and
start asched on it through the `asched` fixture (tests/integration/harness.py).

Names are re-exported for the test modules that import them from here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from asched.localcluster import ApiError, ClusterClient, LocalCluster
from tests.cluster_fixtures import SKIP_ENV, NodeFactory, unique
from tests.integration.harness import AschedHarness

__all__ = ["SKIP_ENV", "NodeFactory", "unique"]

RESOURCE = "/apis/resource.k8s.io/v1"


@pytest.fixture
def asched(
    cluster: LocalCluster, admin: ClusterClient, namespace: str, tmp_path: Path
) -> AschedHarness:
    """asched processes on the session cluster for this test, and its namespace's pods and
    Events as the API server has them (the same `admin` and `namespace` the test sees)."""
    return AschedHarness(cluster, admin, namespace, tmp_path)


class DraObjects:
    """Cluster-scoped DeviceClasses and ResourceSlices, deleted after the test."""

    def __init__(self, admin: ClusterClient) -> None:
        self.admin = admin
        self.created: list[str] = []

    async def create(self, kind_path: str, body: dict[str, Any]) -> None:
        await self.admin.post(f"{RESOURCE}/{kind_path}", body)
        self.created.append(f"{RESOURCE}/{kind_path}/{body['metadata']['name']}")

    async def cleanup(self) -> None:
        for path in self.created:
            try:
                await self.admin.delete(path)
            except ApiError as err:
                if err.status != 404:
                    raise


@pytest.fixture
async def dra_objects(admin: ClusterClient) -> AsyncIterator[DraObjects]:
    objs = DraObjects(admin)
    try:
        yield objs
    finally:
        await objs.cleanup()
