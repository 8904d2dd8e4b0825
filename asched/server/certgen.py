"""The self-signed serving pair, made by `python -m asched.server.certgen` in a child process.

Making the pair needs `cryptography`, whose Rust extension (with its own OpenSSL) adds
7.8 MiB to a process's resident memory once imported and never gives it back: a module
cannot be unloaded. asched needs it once, at start-up, when no `--tls-cert-file` is given,
so tls.py runs this module as a short-lived child and reads the pair from its stdout; the
scheduler itself never loads cryptography unless it is given files to check. The child
lives about 0.3 s (RSA key generation is most of it) while asched is still importing and
listing, well below the memory it reaches when scheduling; its CPU is the parent's (the
kernel adds a waited-for child to the parent's cutime/cstime).

The certificate follows kube-scheduler's (k8s.io/apiserver pkg/server/options/serving.go
MaybeDefaultWithSelfSignedCerts, client-go util/cert GenerateSelfSignedCertKeyWithFixtures):
a CA and a serving certificate it signs, RSA 2048, valid one year, for the host, the IPs
and the DNS names given.

Output: the serving certificate, then the CA (PEM), then the PKCS#8 private key (PEM).
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from asched.server.tls import CertKeyPair

_VALIDITY = datetime.timedelta(days=365)


def generate_self_signed(
    host: str = "localhost", ips: tuple[str, ...] = ("127.0.0.1",), dns: tuple[str, ...] = ()
) -> CertKeyPair:
    """A CA-signed serving pair for *host*, *ips* and *dns*. Blocking (RSA key generation)."""
    now = datetime.datetime.now(datetime.UTC)
    stamp = int(now.timestamp())
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}-ca@{stamp}")])
    ca = _builder(ca_name, ca_name, ca_key, now, ca=True).sign(ca_key, hashes.SHA256())
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names: list[x509.GeneralName] = []
    for value in (host, *ips, *dns):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(value)))
        except ValueError:
            names.append(x509.DNSName(value))
    leaf_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{stamp}")])
    leaf = (
        _builder(leaf_name, ca_name, key, now, ca=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(list(dict.fromkeys(names))), critical=False)
    )
    pem = serialization.Encoding.PEM
    return CertKeyPair(
        leaf.sign(ca_key, hashes.SHA256()).public_bytes(pem) + ca.public_bytes(pem),
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    key: rsa.RSAPrivateKey,
    now: datetime.datetime,
    *,
    ca: bool,
) -> x509.CertificateBuilder:
    """What the CA and the serving certificate share: names, key, serial, validity (from an
    hour ago, for clock skew), basic constraints and key usage."""
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=ca), critical=True)
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=True,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m asched.server.certgen",
        description="Print a self-signed serving certificate, its CA and its key (PEM).",
    )
    parser.add_argument("host")
    parser.add_argument("--ip", action="append", default=[], help="an IP SAN (repeatable)")
    parser.add_argument("--dns", action="append", default=[], help="a DNS SAN (repeatable)")
    args = parser.parse_args(argv)
    pair = generate_self_signed(args.host, tuple(args.ip), tuple(args.dns))
    sys.stdout.buffer.write(pair.cert_pem + pair.key_pem)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
