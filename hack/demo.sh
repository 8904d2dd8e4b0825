#!/usr/bin/env bash
# Runs asched's demo on an embedded local cluster (see `asched demo --help`).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/env.sh
exec .venv/bin/asched demo "$@"
