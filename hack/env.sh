#!/usr/bin/env bash
# Creates (or refreshes) everything asched needs on a fresh machine and prints nothing
# else on success: a virtualenv in .venv with asched and its dev tools, and the Go-built
# control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) in
# the cache outside the checkout. Safe to run again: both steps skip finished work.
# Needs: Python 3.11+ and Go 1.26+ on PATH, and access to PyPI and the Go module proxy.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  "$python" -m venv .venv
fi
stamp=.venv/.asched-deps
if [[ ! -f $stamp || pyproject.toml -nt $stamp || examples/policies/pyproject.toml -nt $stamp ]]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
  .venv/bin/python -m pip install -q -e examples/policies
  touch "$stamp"
fi

# tests/browser drive a real headless Chromium: Debian's chromium and its driver. Installed
# here when missing and we may (root, apt-get present); otherwise those tests skip, saying so.
if ! command -v chromedriver >/dev/null 2>&1 && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

bin_dir=$(hack/controlplane/build.sh | tail -n 1)
export ASCHED_BIN_DIR="$bin_dir"
