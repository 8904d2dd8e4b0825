#!/usr/bin/env bash
# Kubernetes' own [sig-scheduling] e2e specs (k8s.io/kubernetes v1.37.2, test/e2e/scheduling)
# as a regression suite: each scheduler in turn - asched, then kube-scheduler as the
# reference - runs as the default-scheduler of a fresh local kwok cluster, the same spec
# binary runs against it, and a per-spec table of both runs is printed. Exits non-zero if
# asched fails a spec that kube-scheduler passes (tests/e2e/run.py, tests/e2e/report.py).
#
#   bash hack/e2e.sh                                   # all 35 [sig-scheduling] specs
#   bash hack/e2e.sh --focus '\[sig-scheduling\].*\[Conformance\]'
#   bash hack/e2e.sh --schedulers asched               # one side only (no verdict)
#   E2E_OUT=DIR bash hack/e2e.sh                       # keep reports and logs in DIR
#
# The spec binary is built once from hack/e2e (a wrapper module like hack/controlplane/k8s)
# into the control plane's versioned cache outside the checkout, named by a hash of the
# module's files so a change to them rebuilds it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/env.sh # .venv, the control-plane binaries, ASCHED_BIN_DIR

sum=$(cat hack/e2e/go.mod hack/e2e/go.sum hack/e2e/*.go | sha256sum | cut -c1-12)
binary="$ASCHED_BIN_DIR/e2e-scheduling-$sum.test"
if [[ ! -x $binary ]]; then
  echo ">> building the [sig-scheduling] e2e specs (test/e2e/scheduling)" >&2
  start=$SECONDS
  # -mod=mod as in hack/controlplane/build.sh: go.sum is completed for this platform,
  # every module still verified against the checksum database.
  (cd hack/e2e && CGO_ENABLED=0 GOFLAGS=-mod=mod \
    go test -c -trimpath -ldflags "-s -w" -o "$binary.tmp" .)
  mv "$binary.tmp" "$binary"
  echo ">> built the e2e specs in $((SECONDS - start))s ($(du -h "$binary" | cut -f1))" >&2
fi

out=${E2E_OUT:-$(mktemp -d -t asched-e2e.XXXXXX)}
echo ">> reports and logs in $out" >&2
exec .venv/bin/python -m tests.e2e.run --binary "$binary" --out "$out" "$@"
