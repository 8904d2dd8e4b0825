"""ServingOptions: the bind-address rule of --insecure-serving and the other flag checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.base.clock import FakeClock
from asched.cli import build_parser, duration, serving_options
from asched.server.gate import DelegatedGate, OpenGate
from asched.server.options import ServingConfigError, ServingOptions, serving_gate
from tests.unit.server.fakes import ReviewServer


@pytest.mark.parametrize(
    ("bind", "host"),
    [
        pytest.param(None, "127.0.0.1", id="default-is-loopback"),
        pytest.param("127.0.0.1", "127.0.0.1", id="ipv4-loopback"),
        pytest.param("127.0.0.2", "127.0.0.2", id="all-of-127/8"),
        pytest.param("::1", "::1", id="ipv6-loopback"),
    ],
)
def test_insecure_serving_binds_loopback(bind: str | None, host: str) -> None:
    opts = ServingOptions(bind_address=bind, insecure_serving=True)
    opts.validate()
    assert opts.host == host


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "10.0.0.5", "192.168.1.1"])
def test_insecure_serving_refuses_other_addresses(bind: str) -> None:
    with pytest.raises(ServingConfigError) as err:
        ServingOptions(bind_address=bind, insecure_serving=True).validate()
    assert str(err.value) == (
        "--insecure-serving serves plain HTTP without authentication, so it binds a loopback "
        f"address only; --bind-address {bind} is not one (use 127.0.0.1 or ::1, or drop "
        "--insecure-serving for HTTPS)"
    )


def test_secure_serving_defaults_to_every_interface() -> None:
    opts = ServingOptions()
    opts.validate()
    assert (opts.host, opts.secure_port) == ("0.0.0.0", 10259)


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        pytest.param(
            ServingOptions(bind_address="localhost"),
            "--bind-address localhost: not an IP address",
            id="hostname",
        ),
        pytest.param(
            ServingOptions(tls_cert_file=Path("c.crt")),
            "--tls-cert-file is given without --tls-private-key-file; give both or neither",
            id="cert-without-key",
        ),
        pytest.param(
            ServingOptions(tls_private_key_file=Path("c.key")),
            "--tls-private-key-file is given without --tls-cert-file; give both or neither",
            id="key-without-cert",
        ),
        pytest.param(
            ServingOptions(
                insecure_serving=True, tls_cert_file=Path("c"), tls_private_key_file=Path("k")
            ),
            "--insecure-serving serves plain HTTP: --tls-cert-file and --tls-private-key-file "
            "would not be used",
            id="insecure-with-cert",
        ),
        pytest.param(
            ServingOptions(insecure_serving=True, client_ca_file=Path("ca")),
            "--insecure-serving serves plain HTTP: --client-ca-file would not be used",
            id="insecure-with-client-ca",
        ),
        pytest.param(
            ServingOptions(always_allow_paths=("/a*b",)),
            "--authorization-always-allow-paths: only a trailing * is allowed in '/a*b'",
            id="bad-allow-path",
        ),
        pytest.param(
            ServingOptions(secure_port=70000), "--secure-port 70000: not a port", id="port"
        ),
    ],
)
def test_contradictions_are_refused_naming_the_flag(opts: ServingOptions, message: str) -> None:
    with pytest.raises(ServingConfigError) as err:
        opts.validate()
    assert str(err.value).startswith(message)


def test_gate_follows_insecure_serving() -> None:
    api, clock = ReviewServer(), FakeClock()
    assert isinstance(serving_gate(ServingOptions(insecure_serving=True), api, clock), OpenGate)
    assert isinstance(serving_gate(ServingOptions(), api, clock), DelegatedGate)


def test_flags_become_serving_options() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "--secure-port=0",
            "--tls-cert-file=/etc/tls/tls.crt",
            "--tls-private-key-file=/etc/tls/tls.key",
            "--client-ca-file=/etc/tls/ca.crt",
            "--authorization-always-allow-paths=/healthz, /metrics,/debug/*",
            "--authentication-token-webhook-cache-ttl=2m",
            "--authorization-webhook-cache-authorized-ttl=500ms",
            "--authorization-webhook-cache-unauthorized-ttl=0",
        ]
    )
    opts = serving_options(args)
    assert opts == ServingOptions(
        bind_address=None,
        secure_port=0,
        tls_cert_file=Path("/etc/tls/tls.crt"),
        tls_private_key_file=Path("/etc/tls/tls.key"),
        client_ca_file=Path("/etc/tls/ca.crt"),
        always_allow_paths=("/healthz", "/metrics", "/debug/*"),
        authn_cache_ttl=120.0,
        authz_allowed_ttl=0.5,
        authz_denied_ttl=0.0,
    )


def test_flag_defaults_are_kube_schedulers() -> None:
    opts = serving_options(build_parser().parse_args(["run"]))
    assert opts == ServingOptions()
    assert opts.always_allow_paths == ("/healthz", "/readyz", "/livez")
    assert (opts.authn_cache_ttl, opts.authz_allowed_ttl, opts.authz_denied_ttl) == (10, 10, 10)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("500ms", 0.5), ("1m", 60.0), ("1h", 3600.0), ("1.5s", 1.5), ("7", 7.0)],
)
def test_duration(text: str, seconds: float) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [("ten", "is not a duration"), ("5x", "is not a duration"), ("-1s", "must not be negative")],
)
def test_bad_duration(text: str, message: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match=message):
        duration(text)
