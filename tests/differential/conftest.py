"""The differential tests use the session's control plane (tests/cluster_fixtures.py,
loaded by the root conftest); tests that need no cluster (test_harness.py) always run."""
