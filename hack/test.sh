#!/usr/bin/env bash
# The test command (the README's and CI's): set up the environment, lint, type-check,
# then run every test - unit tests and the integration tests against a real
# kube-apiserver with kwok nodes. Extra arguments go to pytest (e.g. tests/unit).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/env.sh

.venv/bin/ruff check asched tests benchmarks examples/policies
.venv/bin/ruff format --check asched tests benchmarks examples/policies
.venv/bin/mypy
# The import layers and "no cycles" contracts of pyproject.toml ([tool.importlinter]).
.venv/bin/lint-imports --no-cache
# The out-of-tree plugin package, with the same strict settings.
.venv/bin/mypy examples/policies/src/asched_policies
# pytest exits 5 when it collects nothing; set -e turns that into a failure too.
.venv/bin/python -m pytest -ra --durations=15 "$@"
