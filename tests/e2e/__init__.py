"""Kubernetes' own [sig-scheduling] e2e specs, run against asched and kube-scheduler."""
