// Wrapper module for kwok, kept apart from the Kubernetes wrapper so each keeps the
// k8s.io versions its own release was tested with.
module asched.dev/controlplane/kwok

go 1.26.0

require sigs.k8s.io/kwok v0.8.0
