"""The ops port: /healthz, /livez, /readyz and /metrics, served as kube-scheduler serves them.

- ops: the aiohttp server and its handlers;
- tls: the serving certificate (generated in memory, or files that are reloaded);
- authn, authz, gate: delegated authentication (TokenReview) and authorization
  (SubjectAccessReview), with the apiserver library's short caches (ttlcache);
- options: the flags, checked, turned into a certificate and a gate.
"""

from asched.server.ops import DEFAULT_HOST, DEFAULT_PORT, Check, OpsServer, OpsServerError

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "Check", "OpsServer", "OpsServerError"]
