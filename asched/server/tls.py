"""The ops port's serving certificate: generated in memory, or loaded from files and reloaded.

As kube-scheduler (k8s.io/apiserver pkg/server/options/serving.go
MaybeDefaultWithSelfSignedCerts): without `--tls-cert-file`/`--tls-private-key-file` a
self-signed pair is made at start-up and kept in memory - a CA and a serving certificate
it signs, RSA 2048, valid one year, for `localhost` and 127.0.0.1 plus the bind address
(client-go util/cert GenerateSelfSignedCertKeyWithFixtures). With the files, they are
read at start-up (a bad file stops asched with a line naming the flag and the file) and
then checked every `period` seconds; a changed pair is validated and used for new
connections, a broken one is logged and the last good pair kept
(pkg/server/dynamiccertificates DynamicCertKeyPairContent, which polls once a minute
besides fsnotify; asched only polls, more often).

With `--client-ca-file` clients may also present a certificate signed by that bundle
(the x509 authenticator of the apiserver's DelegatingAuthenticatorConfig); the bundle is
re-read on the same schedule (dynamiccertificates DynamicFileCAContent).

Python's ssl loads certificates from paths only, so a pair held in memory reaches OpenSSL
through an anonymous memory file (memfd) and never touches a disk. Swapping certificates
on a listening socket works through the SNI callback, which OpenSSL calls on every
handshake (with or without SNI): it points the connection at the current context.

The self-signed pair is made by a child process (certgen.py), which keeps cryptography
out of this long-running one; files are parsed with cryptography in this process, imported
only then. All file reading and context building runs in a worker thread.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import anyio
import anyio.to_thread
import structlog

from asched.base.clock import Clock, RealClock
from asched.base.errors import StartupError

log = structlog.get_logger(__name__)

CERT_FLAG = "--tls-cert-file"
KEY_FLAG = "--tls-private-key-file"
CLIENT_CA_FLAG = "--client-ca-file"
DEFAULT_RELOAD_PERIOD = 10.0
# The directory holding the asched package, for certgen's child process.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class TLSConfigError(StartupError):
    """The serving certificate or key cannot be used."""


@dataclass(frozen=True, slots=True)
class CertKeyPair:
    cert_pem: bytes  # the serving certificate first, then its chain
    key_pem: bytes


# ---- self-signed ------------------------------------------------------------------------

# The PKCS#8 key follows the certificates in the child's output (certgen.main).
_KEY_BEGIN = b"-----BEGIN PRIVATE KEY-----"


async def generate_self_signed_in_child(
    host: str = "localhost", ips: tuple[str, ...] = ("127.0.0.1",), dns: tuple[str, ...] = ()
) -> CertKeyPair:
    """certgen's pair, made by `python -m asched.server.certgen` so that this process never
    loads cryptography (see certgen). Raises TLSConfigError naming what failed."""
    argv = [sys.executable, "-m", "asched.server.certgen", host]
    argv += [f"--ip={ip}" for ip in ips] + [f"--dns={name}" for name in dns]
    # The child imports this very copy of asched, wherever it was found (an installed
    # package, a checkout on PYTHONPATH or the current directory).
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (_PACKAGE_ROOT, env.get("PYTHONPATH"))))
    try:
        done = await anyio.run_process(argv, env=env, check=False)
    except OSError as exc:
        raise TLSConfigError(
            f"self-signed serving certificate: cannot run {argv[0]}: {exc}"
        ) from exc
    out = done.stdout
    at = out.find(_KEY_BEGIN)
    if done.returncode != 0 or at <= 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}, no key in its output"
        raise TLSConfigError(f"self-signed serving certificate: {argv[2]} failed: {why}")
    return CertKeyPair(out[:at], out[at:])


def self_signed_names(bind_address: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(ips, dns) for the generated certificate, as kube-scheduler picks them: 127.0.0.1,
    plus the bind address, or `localhost` when binding every interface."""
    if ipaddress.ip_address(bind_address).is_unspecified:
        return ("127.0.0.1",), ("localhost",)
    return tuple(dict.fromkeys(("127.0.0.1", bind_address))), ()


# ---- files ------------------------------------------------------------------------------


def check_pair(pair: CertKeyPair, cert_source: str, key_source: str) -> None:
    """Raise TLSConfigError naming the flag and file when the pair cannot serve."""
    # Imported here: only files need parsing, and cryptography costs a process 7.8 MiB of
    # resident memory for good (certgen's docstring).
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    try:
        certs = x509.load_pem_x509_certificates(pair.cert_pem)
    except ValueError as exc:
        raise TLSConfigError(f"{CERT_FLAG} {cert_source}: not a PEM certificate") from exc
    try:
        key = serialization.load_pem_private_key(pair.key_pem, password=None)
    except TypeError as exc:  # encrypted, and no password given
        raise TLSConfigError(
            f"{KEY_FLAG} {key_source}: the key is encrypted; asched needs an unencrypted key"
        ) from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        # cryptography's own words point at its FAQ, not at the user's file.
        raise TLSConfigError(f"{KEY_FLAG} {key_source}: not a PEM private key") from exc
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if certs[0].public_key().public_bytes(*spki) != key.public_key().public_bytes(*spki):
        raise TLSConfigError(
            f"{KEY_FLAG} {key_source} does not match the first certificate in "
            f"{CERT_FLAG} {cert_source}"
        )


def read_pair(cert_file: Path, key_file: Path) -> CertKeyPair:
    """Both files' bytes. Blocking; raises TLSConfigError naming the flag and file."""
    data = []
    for flag, path in ((CERT_FLAG, cert_file), (KEY_FLAG, key_file)):
        try:
            data.append(path.read_bytes())
        except OSError as exc:
            why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            raise TLSConfigError(f"{flag} {path}: {why}") from exc
    return CertKeyPair(data[0], data[1])


def build_context(pair: CertKeyPair, client_ca: bytes | None = None) -> ssl.SSLContext:
    """A TLS server context serving *pair* (TLS 1.2 at least, as the apiserver's default).

    With *client_ca*, clients may present a certificate, which must chain to it (OpenSSL
    checks the clientAuth purpose too); one that does not fails the handshake. Go's
    apiserver asks for any certificate and refuses a bad one later with 401: the caller is
    refused either way."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_from_memory(ctx, pair.cert_pem + b"\n" + pair.key_pem)
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(cadata=client_ca.decode("ascii", errors="replace"))
    return ctx


def _load_from_memory(ctx: ssl.SSLContext, pem: bytes) -> None:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("asched-serving", os.MFD_CLOEXEC)
        try:
            os.write(fd, pem)
            ctx.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    # Elsewhere: a private temporary directory, removed at once.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "serving.pem"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        ctx.load_cert_chain(str(path))


def read_client_ca(path: Path) -> bytes:
    """The --client-ca-file bundle's bytes, checked to hold PEM certificates. Blocking."""
    try:
        pem = path.read_bytes()
    except OSError as exc:
        why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise TLSConfigError(f"{CLIENT_CA_FLAG} {path}: {why}") from exc
    from cryptography import x509  # only for files (check_pair)

    try:
        x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        raise TLSConfigError(f"{CLIENT_CA_FLAG} {path}: not a PEM certificate bundle") from exc
    return pem


@dataclass(frozen=True, slots=True)
class Sources:
    """The files the serving material comes from; None: generated (pair) or unused (CA)."""

    cert_files: tuple[Path, Path] | None = None
    client_ca_file: Path | None = None

    @property
    def any(self) -> bool:
        return self.cert_files is not None or self.client_ca_file is not None


def _read(sources: Sources, generated: CertKeyPair | None) -> tuple[CertKeyPair, bytes | None]:
    if sources.cert_files is not None:
        pair = read_pair(*sources.cert_files)
    else:
        assert generated is not None
        pair = generated
    ca = read_client_ca(sources.client_ca_file) if sources.client_ca_file is not None else None
    return pair, ca


def _context_for(pair: CertKeyPair, client_ca: bytes | None, sources: Sources) -> ssl.SSLContext:
    cert_src = key_src = "(generated)"
    if sources.cert_files is not None:
        cert_src, key_src = (str(p) for p in sources.cert_files)
        check_pair(pair, cert_src, key_src)
    try:
        return build_context(pair, client_ca)
    except ssl.SSLError as exc:
        if sources.cert_files is None:
            raise TLSConfigError(f"{CLIENT_CA_FLAG} {sources.client_ca_file}: {exc}") from exc
        raise TLSConfigError(
            f"{CERT_FLAG} {cert_src} / {KEY_FLAG} {key_src}: OpenSSL refused the pair: {exc}"
        ) from exc


# ---- the certificate the server holds ---------------------------------------------------


class ServingCertificate:
    """The current serving pair (and client CA); `server_context` is what the listening
    socket uses."""

    def __init__(
        self,
        pair: CertKeyPair,
        context: ssl.SSLContext,
        *,
        client_ca: bytes | None = None,
        sources: Sources | None = None,
        clock: Clock | None = None,
        period: float = DEFAULT_RELOAD_PERIOD,
    ) -> None:
        self._pair = pair
        self._client_ca = client_ca
        self._current = context
        self._sources = sources or Sources()
        self._clock = clock
        self._period = period
        # The listening socket's context: its SNI callback hands every new connection the
        # current one (a context's certificate cannot be replaced once it is in use).
        self._base = context
        self._base.sni_callback = self._pick

    @classmethod
    async def create(
        cls,
        sources: Sources,
        bind_address: str,
        clock: Clock,
        *,
        period: float = DEFAULT_RELOAD_PERIOD,
    ) -> ServingCertificate:
        """From the files in *sources*, generating the pair when it names none. Raises
        TLSConfigError when a file is missing, unreadable or unusable."""
        ips, dns = self_signed_names(bind_address)

        generated = None
        if sources.cert_files is None:
            generated = await generate_self_signed_in_child("localhost", ips, dns)

        def make() -> tuple[CertKeyPair, bytes | None, ssl.SSLContext]:
            pair, ca = _read(sources, generated)
            return pair, ca, _context_for(pair, ca, sources)

        pair, ca, ctx = await anyio.to_thread.run_sync(make)
        if sources.cert_files is None:
            log.info("serving_certificate_generated", ips=list(ips), dns=["localhost", *dns])
        else:
            cert_file, key_file = sources.cert_files
            log.info("serving_certificate_loaded", cert_file=str(cert_file), key_file=str(key_file))
        if sources.client_ca_file is not None:
            log.info("client_ca_loaded", client_ca_file=str(sources.client_ca_file))
        return cls(pair, ctx, client_ca=ca, sources=sources, clock=clock, period=period)

    @classmethod
    async def generate(cls, bind_address: str) -> ServingCertificate:
        """A generated pair, no client CA, nothing to reload."""
        return await cls.create(Sources(), bind_address, RealClock())

    @classmethod
    async def load(
        cls,
        cert_file: Path,
        key_file: Path,
        clock: Clock,
        *,
        client_ca_file: Path | None = None,
        period: float = DEFAULT_RELOAD_PERIOD,
    ) -> ServingCertificate:
        sources = Sources((cert_file, key_file), client_ca_file)
        return await cls.create(sources, "127.0.0.1", clock, period=period)

    @property
    def server_context(self) -> ssl.SSLContext:
        return self._base

    @property
    def pair(self) -> CertKeyPair:
        return self._pair

    @property
    def client_ca(self) -> bytes | None:
        return self._client_ca

    @property
    def reloads(self) -> bool:
        return self._sources.any

    def _pick(self, sslobj: ssl.SSLObject, _server_name: str | None, _ctx: ssl.SSLContext) -> None:
        if sslobj.context is not self._current:
            sslobj.context = self._current

    async def reload_if_changed(self) -> bool:
        """Read the files; serve them from now on if they changed and are usable.
        True when the context was replaced. A broken file is logged and ignored."""
        if not self._sources.any:
            return False
        sources = self._sources
        try:
            pair, ca = await anyio.to_thread.run_sync(_read, sources, self._pair)
            if (pair, ca) == (self._pair, self._client_ca):
                return False
            ctx = await anyio.to_thread.run_sync(_context_for, pair, ca, sources)
        except TLSConfigError as exc:
            # Mid-rotation (one file written, not yet the other) lands here too; the next
            # check sees the finished pair. A broken pair is not remembered, so it is
            # checked (and reported) again until fixed.
            log.warning("serving_certificate_reload_failed", error=str(exc))
            return False
        self._pair, self._client_ca = pair, ca
        self._current = ctx
        log.info(
            "serving_certificate_reloaded",
            cert_file=str(sources.cert_files[0]) if sources.cert_files else None,
            client_ca_file=str(sources.client_ca_file) if sources.client_ca_file else None,
        )
        return True

    async def watch(self) -> NoReturn:
        """Check the files every `period` seconds until cancelled."""
        if not self._sources.any or self._clock is None:
            await anyio.sleep_forever()
        assert self._clock is not None
        while True:
            await self._clock.sleep(self._period)
            await self.reload_if_changed()
