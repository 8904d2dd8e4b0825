#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok), and kubectl for the manifests' tests, from Go modules into a
# versioned cache outside the checkout, and skips the build when the binaries are already
# there. Prints the binary directory last.
#
#   hack/controlplane/build.sh            # build if missing, print the bin dir
#   ASCHED_CACHE=/somewhere hack/controlplane/build.sh
set -euo pipefail

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.22.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${ASCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/asched}
bin="$cache/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
mkdir -p "$bin"

export CGO_ENABLED=0 GOFLAGS=-mod=mod
# -mod=mod lets the build complete go.sum for the platform it runs on; every module is
# still verified against the checksum database.

build() { # build <module dir> <output name> <package> [ldflags]
  local dir=$1 name=$2 pkg=$3 ldflags=${4:-}
  if [[ -x "$bin/$name" ]]; then return 0; fi
  echo ">> building $name from $pkg" >&2
  local start=$SECONDS
  (cd "$here/$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  echo ">> built $name in $((SECONDS - start))s ($(du -h "$bin/$name" | cut -f1))" >&2
}

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
kver="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
build etcd etcd go.etcd.io/etcd/server/v3
build k8s kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kver"
build k8s kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kver"
build k8s kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kver"
build k8s kubectl k8s.io/kubernetes/cmd/kubectl "$kver"
build kwok kwok sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"

# helm, for the chart's tests (helm lint, helm template | kubectl apply --dry-run=server).
# A module of its own on the module proxy: `go install` at a fixed version needs no
# module directory here, and GOBIN puts it beside the other binaries.
if [[ ! -x "$bin/helm" ]]; then
  echo ">> building helm $HELM_VERSION" >&2
  start=$SECONDS
  GOBIN="$bin" go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  echo ">> built helm in $((SECONDS - start))s" >&2
fi

# kwok refuses to start without stages; ship the module's default fast stages beside it.
if [[ ! -f "$bin/kwok-stages.yaml" ]]; then
  kdir=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  {
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
      cat "$kdir/kustomize/stage/$f"; echo "---"
    done
  } > "$bin/kwok-stages.yaml.tmp"
  mv "$bin/kwok-stages.yaml.tmp" "$bin/kwok-stages.yaml"
fi
echo "$bin"
