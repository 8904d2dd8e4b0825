"""Fixtures for the differential tests: the integration suite's control plane and clients.

The integration conftest's collection hook marks only tests under its own directory, so
this one marks (and, with ASCHED_SKIP_INTEGRATION=1, skips) the tests here that use the
cluster. The fixtures
are imported, not redefined: a differential test gets exactly what an integration test
gets (note that a session running both directories starts one cluster for each, because
pytest keeps a session fixture per defining conftest).
"""

from __future__ import annotations

import os

import pytest

from tests.integration.conftest import (  # noqa: F401 - fixtures used by name
    SKIP_ENV,
    admin,
    cluster,
    kwok_nodes,
    namespace,
    scheduler_client,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = os.environ.get(SKIP_ENV) == "1"
    for item in items:
        # The harness's own tests (test_harness.py) need no cluster and always run.
        if str(item.path).startswith(here) and "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
            if skip:
                item.add_marker(pytest.mark.skip(reason=f"{SKIP_ENV}=1"))
