// Package kwok exists so the wrapper module has a package; the binary is built from
// sigs.k8s.io/kwok/cmd/kwok with this module's build list.
package kwok
