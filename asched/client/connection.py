"""Connection: where the API server is and who asched is to it, and the TLS context for it.

Every way of finding the API server (a kubeconfig with static credentials, one with an
exec plugin, the in-cluster service account, a test's token) ends in this one frozen
value, which is all RestClient needs.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path

from asched.client.kubeconfig_shape import KubeconfigError
from asched.client.tlssession import client_context


@dataclass(frozen=True, slots=True)
class Connection:
    """Everything needed to open connections to one API server as one identity."""

    host: str  # scheme://host:port, no trailing slash
    # An SSLContext carrying the CA and client certificate; True means the system trust
    # store; False turns verification off (insecure-skip-tls-verify).
    tls: ssl.SSLContext | bool = True
    # A static Authorization header value ("Bearer ...", "Basic ..."); kept out of repr.
    authorization: str | None = field(default=None, repr=False)
    # A bearer token file re-read periodically; wins over `authorization` once read.
    token_file: Path | None = None
    # Where the CA and client certificate came from, when they came from files (for
    # messages and operators; the context above already holds their contents).
    ca_file: str | None = None
    client_cert_file: str | None = None
    client_key_file: str | None = None
    tls_server_name: str | None = None
    proxy: str | None = None

    @classmethod
    def from_token(
        cls, host: str, token: str, *, ca_pem: bytes | None = None, verify: bool = True
    ) -> Connection:
        """A bearer-token connection; *ca_pem*, when given, is the only trusted CA."""
        tls: ssl.SSLContext | bool
        if not verify:
            tls = False
        elif ca_pem is not None:
            tls = client_context(cadata=ca_pem.decode("ascii"))
        else:
            tls = True
        return cls(host=host.rstrip("/"), tls=tls, authorization=f"Bearer {token}")


def tls_context(
    source: str,
    verify: bool,
    *,
    ca_file: str | None = None,
    ca_pem: bytes | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
) -> ssl.SSLContext | bool:
    """The client TLS context: the CA (a file or PEM bytes, else the system store), the
    client certificate, and verification off for insecure-skip-tls-verify. False when
    there is nothing to verify and nothing to present."""
    if not verify and cert_file is None:
        return False
    # ssl's own messages ("[SSL] PEM lib (_ssl.c:3900)") name no file; these do.
    ca_name = ca_file or "certificate-authority-data"
    try:
        # A context that resumes TLS sessions (see asched.client.tlssession).
        if ca_pem is not None:
            ctx = client_context(cadata=ca_pem.decode("ascii"))
        else:
            ctx = client_context(cafile=ca_file)
    except (ssl.SSLError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise KubeconfigError(
            f"{source}: certificate-authority {ca_name}: not a readable PEM CA bundle: {exc}"
        ) from exc
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cert_file is not None:
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except (ssl.SSLError, OSError) as exc:
            raise KubeconfigError(
                f"{source}: client-certificate {cert_file} / client-key {key_file}: "
                f"not a readable PEM certificate and matching key: {exc}"
            ) from exc
    return ctx
