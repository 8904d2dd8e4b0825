"""The policies' end-to-end test uses the main repo's control-plane fixtures
(tests/cluster_fixtures.py, loaded by the root conftest.py when pytest runs from the repo
root). This directory has no __init__.py on purpose: with one, pytest would import it as a
package named `tests` and shadow the main repo's `tests` (builders, helpers)."""
