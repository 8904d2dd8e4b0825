"""Root conftest: the control-plane fixtures, shared by every test directory.

pytest honours `pytest_plugins` only here, at the root; a session fixture defined in
several conftests would start one cluster per directory.
"""

pytest_plugins = ["tests.cluster_fixtures"]
