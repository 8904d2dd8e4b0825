// Package k8s exists so the wrapper module has a package; the binaries are built from
// k8s.io/kubernetes/cmd/... with this module's build list.
package k8s
