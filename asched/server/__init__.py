"""The ops port: /healthz, /livez, /readyz and /metrics, served as kube-scheduler serves them.

- ops: the aiohttp server and its handlers;
- tls: the serving certificate (generated in memory, or files that are reloaded);
- certgen: the self-signed pair, made in a child process (`python -m asched.server.certgen`);
- authn, authz, gate: delegated authentication (TokenReview) and authorization
  (SubjectAccessReview), with the apiserver library's short caches (cachetools);
- options: the flags, checked, turned into a certificate and a gate.

This file imports nothing: certgen's child process imports this package, and should load
only what it needs.
"""
