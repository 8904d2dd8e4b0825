"""The serving certificate: generation, clear errors for bad files, and reload on change."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from asched.base.clock import FakeClock
from asched.metrics import Metrics
from asched.server.certgen import generate_self_signed
from asched.server.ops import OpsServer
from asched.server.tls import (
    CertKeyPair,
    ServingCertificate,
    TLSConfigError,
    generate_self_signed_in_child,
    self_signed_names,
)

# RSA generation costs ~0.1 s a pair: make the pairs once for the module.
PAIR_A = generate_self_signed()
PAIR_B = generate_self_signed()


def _write(d: Path, pair: CertKeyPair) -> tuple[Path, Path]:
    (d / "tls.crt").write_bytes(pair.cert_pem)
    (d / "tls.key").write_bytes(pair.key_pem)
    return d / "tls.crt", d / "tls.key"


def _client_context(pair: CertKeyPair) -> ssl.SSLContext:
    """Verifies the server against the generated CA (the chain's last certificate)."""
    ca = x509.load_pem_x509_certificates(pair.cert_pem)[-1]
    return ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())


async def _served_leaf(port: int, ctx: ssl.SSLContext) -> bytes:
    """The DER certificate a new TLS connection to 127.0.0.1:port is given."""
    _reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
    assert der is not None
    return bytes(der)


def _leaf_der(pair: CertKeyPair) -> bytes:
    return x509.load_pem_x509_certificates(pair.cert_pem)[0].public_bytes(
        serialization.Encoding.DER
    )


def test_self_signed_pair_is_a_ca_signed_serving_certificate() -> None:
    leaf, ca = x509.load_pem_x509_certificates(PAIR_A.cert_pem)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert leaf.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    leaf.verify_directly_issued_by(ca)


@pytest.mark.parametrize(
    ("bind", "ips", "dns"),
    [
        ("0.0.0.0", ("127.0.0.1",), ("localhost",)),
        ("::", ("127.0.0.1",), ("localhost",)),
        ("10.1.2.3", ("127.0.0.1", "10.1.2.3"), ()),
        ("127.0.0.1", ("127.0.0.1",), ()),
    ],
)
def test_self_signed_names_follow_the_bind_address(
    bind: str, ips: tuple[str, ...], dns: tuple[str, ...]
) -> None:
    assert self_signed_names(bind) == (ips, dns)


async def test_generated_certificate_verifies_for_127_0_0_1() -> None:
    cert = await ServingCertificate.generate("127.0.0.1")
    async with OpsServer(
        Metrics(process_metrics=False), host="127.0.0.1", port=0, certificate=cert
    ) as server:
        assert server.url.startswith("https://127.0.0.1:")
        assert await _served_leaf(server.port, _client_context(cert.pair)) == _leaf_der(cert.pair)


def _encrypted_key() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )


@pytest.mark.parametrize(
    ("cert", "key", "message"),
    [
        pytest.param(
            None,
            PAIR_A.key_pem,
            "--tls-cert-file {d}/tls.crt: no such file or directory",
            id="no-cert",
        ),
        pytest.param(
            PAIR_A.cert_pem,
            None,
            "--tls-private-key-file {d}/tls.key: no such file or directory",
            id="no-key",
        ),
        pytest.param(
            b"not a certificate\n",
            PAIR_A.key_pem,
            "--tls-cert-file {d}/tls.crt: not a PEM certificate",
            id="garbage-cert",
        ),
        pytest.param(
            PAIR_A.cert_pem,
            b"not a key\n",
            "--tls-private-key-file {d}/tls.key: not a PEM private key",
            id="garbage-key",
        ),
        pytest.param(
            PAIR_A.cert_pem,
            _encrypted_key(),
            "--tls-private-key-file {d}/tls.key: the key is encrypted",
            id="encrypted-key",
        ),
        pytest.param(
            PAIR_A.cert_pem,
            PAIR_B.key_pem,
            "--tls-private-key-file {d}/tls.key does not match the first certificate in "
            "--tls-cert-file {d}/tls.crt",
            id="mismatch",
        ),
    ],
)
async def test_bad_files_stop_start_up_naming_flag_and_file(
    tmp_path: Path, cert: bytes | None, key: bytes | None, message: str
) -> None:
    if cert is not None:
        (tmp_path / "tls.crt").write_bytes(cert)
    if key is not None:
        (tmp_path / "tls.key").write_bytes(key)

    with pytest.raises(TLSConfigError) as err:
        await ServingCertificate.load(tmp_path / "tls.crt", tmp_path / "tls.key", FakeClock())

    assert str(err.value).startswith(message.format(d=tmp_path))


async def test_rotated_files_serve_new_connections(tmp_path: Path) -> None:
    cert_file, key_file = _write(tmp_path, PAIR_A)
    cert = await ServingCertificate.load(cert_file, key_file, FakeClock())
    async with OpsServer(
        Metrics(process_metrics=False), host="127.0.0.1", port=0, certificate=cert
    ) as server:
        before = await _served_leaf(server.port, _client_context(PAIR_A))
        assert not await cert.reload_if_changed()  # unchanged files: nothing to do

        _write(tmp_path, PAIR_B)
        assert await cert.reload_if_changed()
        after = await _served_leaf(server.port, _client_context(PAIR_B))

    assert (before, after) == (_leaf_der(PAIR_A), _leaf_der(PAIR_B))


async def test_a_broken_rotation_keeps_the_last_good_pair(tmp_path: Path) -> None:
    cert_file, key_file = _write(tmp_path, PAIR_A)
    cert = await ServingCertificate.load(cert_file, key_file, FakeClock())
    # Half-way through a rotation: the new certificate, the old key.
    cert_file.write_bytes(PAIR_B.cert_pem)

    assert not await cert.reload_if_changed()
    assert cert.pair == PAIR_A
    key_file.write_bytes(PAIR_B.key_pem)
    assert await cert.reload_if_changed()
    assert cert.pair == PAIR_B


async def test_the_server_checks_the_files_every_period(tmp_path: Path) -> None:
    clock = FakeClock()
    cert_file, key_file = _write(tmp_path, PAIR_A)
    cert = await ServingCertificate.load(cert_file, key_file, clock, period=10.0)
    async with (
        OpsServer(
            Metrics(process_metrics=False), host="127.0.0.1", port=0, certificate=cert
        ) as server,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(server.watch_certificate)
        _write(tmp_path, PAIR_B)
        await anyio.wait_all_tasks_blocked()
        assert clock.sleepers == 1  # the reload loop waits on the injected clock
        clock.advance(9.0)
        await anyio.wait_all_tasks_blocked()
        assert cert.pair == PAIR_A
        clock.advance(1.0)
        # The files are read in a worker thread, which no event can tell the test about:
        # poll (bounded) for it to finish.
        with anyio.fail_after(5):
            while cert.pair != PAIR_B:  # noqa: ASYNC110
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()


async def test_the_child_process_makes_the_pair_for_the_names_given() -> None:
    pair = await generate_self_signed_in_child("localhost", ("127.0.0.1", "10.1.2.3"), ("a.b",))
    leaf, ca = x509.load_pem_x509_certificates(pair.cert_pem)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost", "a.b"]
    assert sans.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("10.1.2.3"),
    ]
    leaf.verify_directly_issued_by(ca)
    key = serialization.load_pem_private_key(pair.key_pem, password=None)
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    assert key.public_key().public_bytes(*spki) == leaf.public_key().public_bytes(*spki)


async def test_a_failing_child_is_a_start_up_error_that_says_why() -> None:
    # cryptography refuses a DNS name that is not an A-label; the child's last stderr line
    # (the exception) reaches the error.
    with pytest.raises(TLSConfigError, match=r"asched.server.certgen failed: .*A-label"):
        await generate_self_signed_in_child("localhost", dns=("bücher.example",))


def test_serving_a_generated_certificate_never_loads_cryptography() -> None:
    # The scheduler's process stays without cryptography (certgen's docstring): importing
    # the app and generating the serving pair leaves it unloaded.
    code = (
        "import sys, anyio\n"
        "import asched.app\n"
        "from asched.server.tls import ServingCertificate\n"
        "cert = anyio.run(ServingCertificate.generate, '127.0.0.1')\n"
        "assert cert.pair.key_pem.startswith(b'-----BEGIN PRIVATE KEY-----')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cryptography', 'rich')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert done.stdout.decode().splitlines()[-1] == "[]"


async def test_generated_certificate_is_not_reloaded() -> None:
    cert = await ServingCertificate.generate("127.0.0.1")
    assert not cert.reloads
    assert not await cert.reload_if_changed()
