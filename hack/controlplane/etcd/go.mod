// Wrapper module: etcd's server module is its `main` package, but its own go.mod carries
// replace lines, so `go install ...@version` refuses it; building it from here works.
module asched.dev/controlplane/etcd

go 1.26.0

require go.etcd.io/etcd/server/v3 v3.6.16
