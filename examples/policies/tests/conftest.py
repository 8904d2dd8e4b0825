"""Fixtures for the policies' tests: the main repo's control-plane fixtures, re-exported.

This directory has no __init__.py on purpose: with one, pytest would import it as a
package named `tests` and shadow the main repo's `tests` (builders, integration helpers).
`pytest_plugins` is only honoured in the rootdir's conftest, so the integration fixtures
are imported by name instead. They are session-scoped per defining conftest: when the
whole suite runs, these tests get a control plane of their own.
"""

from __future__ import annotations

from tests.integration.conftest import (
    SKIP_ENV,
    admin,
    cluster,
    kwok_nodes,
    namespace,
    scheduler_client,
)

__all__ = ["SKIP_ENV", "admin", "cluster", "kwok_nodes", "namespace", "scheduler_client"]
