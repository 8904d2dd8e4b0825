"""ApiError from Status bodies and watch ERROR events."""

from __future__ import annotations

import orjson
import pytest

from asched.client.status import error_from_response, error_from_status

CONFLICT = orjson.dumps(
    {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": 409,
        "reason": "Conflict",
        "message": 'Operation cannot be fulfilled on pods/binding "p"',
    }
)


@pytest.mark.parametrize(
    ("code", "body", "reason", "message"),
    [
        pytest.param(
            409,
            CONFLICT,
            "Conflict",
            'Operation cannot be fulfilled on pods/binding "p"',
            id="status-body",
        ),
        pytest.param(
            503,
            b"<html>bad gateway</html>",
            "Service Unavailable",
            "<html>bad gateway</html>",
            id="not-json",
        ),
        pytest.param(404, b"", "Not Found", "", id="empty-body"),
        pytest.param(
            500,
            b'{"kind":"Status","code":500}',
            "Internal Server Error",
            "",
            id="status-without-reason",
        ),
        pytest.param(
            403, b'["not","a","status"]', "Forbidden", '["not","a","status"]', id="json-not-status"
        ),
    ],
)
def test_error_from_response(code: int, body: bytes, reason: str, message: str) -> None:
    err = error_from_response(code, body, method="POST", path="/x")

    assert (err.status, err.reason, err.message) == (code, reason, message)
    assert str(err).startswith(f"POST /x: {code}")


def test_watch_error_event_keeps_its_code() -> None:
    err = error_from_status(
        {
            "kind": "Status",
            "code": 410,
            "reason": "Expired",
            "message": "too old resource version: 1 (42)",
        }
    )

    assert err.gone
    assert (err.reason, err.message) == ("Expired", "too old resource version: 1 (42)")
