"""Client-certificate authentication (--client-ca-file): the user a certificate names, and
HTTPS end to end with a CA of the test's own."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from asched.base.clock import FakeClock
from asched.metrics import Metrics
from asched.server.authn import TOKEN_REVIEWS, UserInfo, user_from_client_certificate
from asched.server.authz import SUBJECT_ACCESS_REVIEWS
from asched.server.ops import OpsServer
from asched.server.options import ServingOptions, serving_gate
from asched.server.tls import ServingCertificate, TLSConfigError
from tests.certs import ClientCA
from tests.unit.server.fakes import ReviewServer, access_review, token_review
from tests.unit.server.test_tls import PAIR_A, _client_context, _write


@pytest.mark.parametrize(
    ("peercert", "user"),
    [
        pytest.param(None, None, id="no-certificate"),
        pytest.param({}, None, id="empty"),
        pytest.param(
            {"subject": ((("commonName", "alice"),),)},
            UserInfo("alice", groups=("system:authenticated",)),
            id="common-name",
        ),
        pytest.param(
            {
                "subject": (
                    (("organizationName", "ops"),),
                    (("organizationName", "dev"),),
                    (("commonName", "bob"),),
                )
            },
            UserInfo("bob", groups=("ops", "dev", "system:authenticated")),
            id="organizations-are-groups",
        ),
        pytest.param({"subject": ((("organizationName", "ops"),),)}, None, id="no-common-name"),
        pytest.param(
            {"subject": ((("commonName", "first"),), (("commonName", "last"),))},
            UserInfo("last", groups=("system:authenticated",)),
            id="last-common-name",
        ),
    ],
)
def test_user_from_client_certificate(peercert: Any, user: UserInfo | None) -> None:
    assert user_from_client_certificate(peercert) == user


def _access(body: dict[str, Any]) -> dict[str, Any]:
    spec = body["spec"]
    return access_review(spec["user"] == "cert-user" and "ops" in spec.get("groups", []))


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[OpsServer, ClientCA, ReviewServer]]:
    ca = ClientCA()
    (tmp_path / "ca.crt").write_bytes(ca.pem)
    cert_file, key_file = _write(tmp_path, PAIR_A)
    api = ReviewServer(
        {TOKEN_REVIEWS: lambda _b: token_review(None), SUBJECT_ACCESS_REVIEWS: _access}
    )
    cert = await ServingCertificate.load(
        cert_file, key_file, FakeClock(), client_ca_file=tmp_path / "ca.crt"
    )
    ops = OpsServer(
        Metrics(process_metrics=False),
        host="127.0.0.1",
        port=0,
        certificate=cert,
        gate=serving_gate(ServingOptions(), api, FakeClock()),
    )
    async with ops:
        yield ops, ca, api


async def _get(ops: OpsServer, ctx: ssl.SSLContext, path: str = "/metrics") -> tuple[int, bytes]:
    connector = aiohttp.TCPConnector(ssl=ctx)
    async with (
        aiohttp.ClientSession(connector=connector) as http,
        http.get(f"{ops.url}{path}") as resp,
    ):
        return resp.status, await resp.read()


def _with_client_cert(
    tmp_path: Path, ca: ClientCA, user: str, groups: tuple[str, ...]
) -> ssl.SSLContext:
    ctx = _client_context(PAIR_A)
    cert, key = ca.issue(user, groups).write(tmp_path, user)
    ctx.load_cert_chain(cert, key)
    return ctx


async def test_a_certificate_of_the_ca_authenticates_its_user(
    served: tuple[OpsServer, ClientCA, ReviewServer], tmp_path: Path
) -> None:
    ops, ca, api = served

    allowed = await _get(ops, _with_client_cert(tmp_path, ca, "cert-user", ("ops",)))
    denied = await _get(ops, _with_client_cert(tmp_path, ca, "someone", ("dev",)))
    anonymous = await _get(ops, _client_context(PAIR_A))

    assert allowed[0] == 200
    assert denied[0] == 403
    assert orjson.loads(denied[1])["message"] == (
        'forbidden: User "someone" cannot get path "/metrics"'
    )
    assert anonymous[0] == 401
    # Certificates need no TokenReview; the SubjectAccessReview carries their groups.
    assert api.bodies(TOKEN_REVIEWS) == []
    assert [b["spec"]["groups"] for b in api.bodies(SUBJECT_ACCESS_REVIEWS)] == [
        ["ops", "system:authenticated"],
        ["dev", "system:authenticated"],
    ]


async def test_a_certificate_of_another_ca_is_refused(
    served: tuple[OpsServer, ClientCA, ReviewServer], tmp_path: Path
) -> None:
    ops, _, _ = served
    with pytest.raises(aiohttp.ClientError):
        await _get(ops, _with_client_cert(tmp_path, ClientCA("other"), "cert-user", ("ops",)))


async def test_a_rotated_client_ca_is_used_for_new_connections(tmp_path: Path) -> None:
    old, new = ClientCA("old"), ClientCA("new")
    (tmp_path / "ca.crt").write_bytes(old.pem)
    cert_file, key_file = _write(tmp_path, PAIR_A)
    cert = await ServingCertificate.load(
        cert_file, key_file, FakeClock(), client_ca_file=tmp_path / "ca.crt"
    )
    api = ReviewServer({SUBJECT_ACCESS_REVIEWS: lambda _b: access_review(True)})
    async with OpsServer(
        Metrics(process_metrics=False),
        host="127.0.0.1",
        port=0,
        certificate=cert,
        gate=serving_gate(ServingOptions(), api, FakeClock()),
    ) as ops:
        assert (await _get(ops, _with_client_cert(tmp_path, old, "u", ())))[0] == 200
        (tmp_path / "ca.crt").write_bytes(new.pem)
        assert await cert.reload_if_changed()
        assert (await _get(ops, _with_client_cert(tmp_path, new, "u", ())))[0] == 200
        with pytest.raises(aiohttp.ClientError):
            await _get(ops, _with_client_cert(tmp_path, old, "u", ()))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(None, "--client-ca-file {d}/ca.crt: no such file or directory", id="missing"),
        pytest.param(
            b"garbage\n", "--client-ca-file {d}/ca.crt: not a PEM certificate bundle", id="garbage"
        ),
    ],
)
async def test_bad_client_ca_file_names_flag_and_file(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    if content is not None:
        (tmp_path / "ca.crt").write_bytes(content)
    cert_file, key_file = _write(tmp_path, PAIR_A)
    with pytest.raises(TLSConfigError) as err:
        await ServingCertificate.load(
            cert_file, key_file, FakeClock(), client_ca_file=tmp_path / "ca.crt"
        )
    assert str(err.value) == message.format(d=tmp_path)
