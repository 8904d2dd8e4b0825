"""Integration tests use the session's control plane from tests/cluster_fixtures.py.

Names are re-exported for the test modules that import them from here.
"""

from tests.cluster_fixtures import SKIP_ENV, NodeFactory, unique

__all__ = ["SKIP_ENV", "NodeFactory", "unique"]
