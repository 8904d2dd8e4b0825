// Package etcd exists so the wrapper module has a package; the binary is built from
// go.etcd.io/etcd/server/v3 with this module's build list.
package etcd
