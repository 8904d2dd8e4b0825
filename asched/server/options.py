"""The ops port's serving flags, checked, and turned into a certificate and a gate.

kube-scheduler's SecureServingOptions, DelegatingAuthenticationOptions and
DelegatingAuthorizationOptions (k8s.io/apiserver pkg/server/options) reduced to what asched
serves: the port, the certificate (generated, or files that are reloaded), the
always-allow paths and the three cache TTLs. The delegated calls go through a client of
asched's own identity, which needs `create` on tokenreviews and subjectaccessreviews
(the `system:auth-delegator` ClusterRole; manifests/rbac.yaml binds it).

`--insecure-serving` is plain HTTP that anyone who can connect may read: it exists for
tests and the demo, so it only binds a loopback address, and a bind address that is not
one stops asched with a line saying so.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from asched.base.clock import Clock
from asched.base.errors import StartupError
from asched.client.protocol import KubeClient
from asched.server import authn, authz
from asched.server.gate import DelegatedGate, Gate, OpenGate
from asched.server.tls import CERT_FLAG, CLIENT_CA_FLAG, KEY_FLAG, ServingCertificate, Sources

SECURE_BIND_ADDRESS = "0.0.0.0"
INSECURE_BIND_ADDRESS = "127.0.0.1"


class ServingConfigError(StartupError):
    """The serving flags contradict each other or name something unusable."""


@dataclass(slots=True)
class ServingOptions:
    # None: 0.0.0.0 when serving HTTPS (probes and scrapes come from outside the pod),
    # 127.0.0.1 with --insecure-serving.
    bind_address: str | None = None
    secure_port: int = 10259
    insecure_serving: bool = False
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    client_ca_file: Path | None = None
    always_allow_paths: tuple[str, ...] = authz.DEFAULT_ALWAYS_ALLOW_PATHS
    authn_cache_ttl: float = authn.DEFAULT_TTL
    authz_allowed_ttl: float = authz.DEFAULT_ALLOWED_TTL
    authz_denied_ttl: float = authz.DEFAULT_DENIED_TTL
    privileged_groups: tuple[str, ...] = field(default=authz.DEFAULT_PRIVILEGED_GROUPS)

    @property
    def host(self) -> str:
        if self.bind_address is not None:
            return self.bind_address
        return INSECURE_BIND_ADDRESS if self.insecure_serving else SECURE_BIND_ADDRESS

    def validate(self) -> None:
        """Raise ServingConfigError for flags that cannot work together."""
        host = self.host
        try:
            address = ipaddress.ip_address(host)
        except ValueError as exc:
            raise ServingConfigError(
                f"--bind-address {host}: not an IP address (kube-scheduler's flag takes one)"
            ) from exc
        if self.insecure_serving:
            if not address.is_loopback:
                raise ServingConfigError(
                    f"--insecure-serving serves plain HTTP without authentication, so it "
                    f"binds a loopback address only; --bind-address {host} is not one "
                    f"(use 127.0.0.1 or ::1, or drop --insecure-serving for HTTPS)"
                )
            if self.tls_cert_file is not None or self.tls_private_key_file is not None:
                raise ServingConfigError(
                    f"--insecure-serving serves plain HTTP: {CERT_FLAG} and {KEY_FLAG} "
                    f"would not be used"
                )
            if self.client_ca_file is not None:
                raise ServingConfigError(
                    f"--insecure-serving serves plain HTTP: {CLIENT_CA_FLAG} would not be used"
                )
        if (self.tls_cert_file is None) != (self.tls_private_key_file is None):
            given, missing = (CERT_FLAG, KEY_FLAG)
            if self.tls_cert_file is None:
                given, missing = missing, given
            raise ServingConfigError(f"{given} is given without {missing}; give both or neither")
        if not 0 <= self.secure_port <= 65535:
            raise ServingConfigError(f"--secure-port {self.secure_port}: not a port (0-65535)")
        for flag, ttl in (
            ("--authentication-token-webhook-cache-ttl", self.authn_cache_ttl),
            ("--authorization-webhook-cache-authorized-ttl", self.authz_allowed_ttl),
            ("--authorization-webhook-cache-unauthorized-ttl", self.authz_denied_ttl),
        ):
            if ttl < 0:
                raise ServingConfigError(f"{flag} {ttl}: must not be negative")
        try:
            authz.PathAllowList(self.always_allow_paths)
        except authz.AllowPathsError as exc:
            raise ServingConfigError(str(exc)) from exc


async def serving_certificate(opts: ServingOptions, clock: Clock) -> ServingCertificate | None:
    """None for --insecure-serving; raises TLSConfigError for unusable files."""
    if opts.insecure_serving:
        return None
    files = None
    if opts.tls_cert_file is not None and opts.tls_private_key_file is not None:
        files = (opts.tls_cert_file, opts.tls_private_key_file)
    return await ServingCertificate.create(Sources(files, opts.client_ca_file), opts.host, clock)


def serving_gate(opts: ServingOptions, client: KubeClient, clock: Clock) -> Gate:
    if opts.insecure_serving:
        return OpenGate()
    return DelegatedGate(
        authz.PathAllowList(opts.always_allow_paths),
        authn.TokenReviewAuthenticator(client, clock, ttl=opts.authn_cache_ttl),
        authz.SubjectAccessReviewAuthorizer(
            client,
            clock,
            allowed_ttl=opts.authz_allowed_ttl,
            denied_ttl=opts.authz_denied_ttl,
            privileged_groups=opts.privileged_groups,
        ),
    )
