"""DelegatedGate: which request is served, and what a refused one is told."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from asched.base.clock import FakeClock
from asched.server.authn import TOKEN_REVIEWS, TokenReviewAuthenticator
from asched.server.authz import (
    DEFAULT_ALWAYS_ALLOW_PATHS,
    SUBJECT_ACCESS_REVIEWS,
    PathAllowList,
    SubjectAccessReviewAuthorizer,
)
from asched.server.gate import DelegatedGate, OpenGate, bearer_token
from tests.unit.server.fakes import ReviewServer, access_review, token_review

# token -> user; "reader" may get /metrics, everyone else is denied.
USERS = {"good": "reader", "other": "stranger"}


def _token_answer(body: dict[str, Any]) -> dict[str, Any]:
    return token_review(USERS.get(body["spec"]["token"]))


def _access_answer(body: dict[str, Any]) -> dict[str, Any]:
    spec = body["spec"]
    attrs = spec["nonResourceAttributes"]
    ok = spec["user"] == "reader" and attrs == {"path": "/metrics", "verb": "get"}
    return access_review(ok, "" if ok else 'RBAC: no rule for "' + spec["user"] + '"')


def _connection_reset(_body: dict[str, Any]) -> Any:
    raise ConnectionResetError("connection reset by peer")


def _gate(api: ReviewServer) -> DelegatedGate:
    clock = FakeClock()
    return DelegatedGate(
        PathAllowList(DEFAULT_ALWAYS_ALLOW_PATHS),
        TokenReviewAuthenticator(api, clock),
        SubjectAccessReviewAuthorizer(api, clock),
    )


def _api() -> ReviewServer:
    return ReviewServer({TOKEN_REVIEWS: _token_answer, SUBJECT_ACCESS_REVIEWS: _access_answer})


@pytest.mark.parametrize(
    ("method", "path", "authorization", "status", "message"),
    [
        pytest.param("GET", "/healthz", None, None, None, id="probe-without-token"),
        pytest.param("GET", "/readyz", "Bearer nonsense", None, None, id="probe-ignores-token"),
        pytest.param("GET", "/metrics", None, 401, "Unauthorized", id="no-token"),
        pytest.param("GET", "/metrics", "Basic dTpw", 401, "Unauthorized", id="not-bearer"),
        pytest.param("GET", "/metrics", "Bearer ", 401, "Unauthorized", id="empty-token"),
        pytest.param("GET", "/metrics", "Bearer bad", 401, "Unauthorized", id="unknown-token"),
        pytest.param("GET", "/metrics", "Bearer good", None, None, id="allowed"),
        pytest.param("GET", "/metrics", "bearer good", None, None, id="scheme-any-case"),
        pytest.param(
            "GET",
            "/metrics",
            "Bearer other",
            403,
            'forbidden: User "stranger" cannot get path "/metrics": RBAC: no rule for "stranger"',
            id="denied",
        ),
        pytest.param(
            "POST",
            "/metrics",
            "Bearer good",
            403,
            'forbidden: User "reader" cannot post path "/metrics": RBAC: no rule for "reader"',
            id="other-verb-denied",
        ),
        pytest.param("GET", "/nowhere", None, 401, "Unauthorized", id="unknown-path-no-token"),
    ],
)
async def test_admission(
    method: str, path: str, authorization: str | None, status: int | None, message: str | None
) -> None:
    refusal = await _gate(_api()).admit(method, path, authorization)

    if status is None:
        assert refusal is None
        return
    assert refusal is not None
    body = orjson.loads(refusal.body)
    assert (refusal.status, refusal.content_type) == (status, "application/json")
    assert body["kind"] == "Status"
    assert (body["code"], body["message"]) == (status, message)


async def test_api_server_down_fails_closed() -> None:
    api = _api()
    gate = _gate(api)
    api.down = True

    unauthenticated = await gate.admit("GET", "/metrics", "Bearer good")
    assert unauthenticated is not None
    assert unauthenticated.status == 401

    # Authenticated while up, then the SubjectAccessReview cannot be made: 500, not served.
    api.down = False
    api.answers[SUBJECT_ACCESS_REVIEWS] = _connection_reset
    refusal = await gate.admit("GET", "/metrics", "Bearer good")
    assert refusal is not None
    assert refusal.status == 500
    assert refusal.body.startswith(b'Internal Server Error: "/metrics": SubjectAccessReview failed')
    # The probe paths stay served: a kubelet must not restart asched for an API outage.
    assert await gate.admit("GET", "/healthz", None) is None


async def test_open_gate_serves_everyone() -> None:
    assert await OpenGate().admit("DELETE", "/metrics", None) is None


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer abc", "abc"),
        ("  Bearer abc  ", "abc"),
        ("BEARER abc", "abc"),
        ("Bearer", None),
        ("Bearer  abc", None),  # two spaces: an empty token, as the apiserver splits it
        ("Token abc", None),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token
