"""Turning the API server's failure answers into ApiError.

kube-apiserver reports failures as a meta/v1 Status object: in the body of a non-2xx
response, and inside a watch stream as an ERROR event (where a 410 "Expired" means the
watch's resourceVersion was compacted away and the caller must relist). Both paths go
through here so callers branch on one exception type and its `status` code.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson

from asched.client import kproto
from asched.client.protocol import ApiError

# Bodies that are not a Status (a proxy's HTML error page) are quoted this far, no further.
_MAX_QUOTED_BODY = 300


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return ""


def error_from_status(
    status: Any, *, code: int | None = None, method: str = "", path: str = ""
) -> ApiError:
    """An ApiError from a decoded Status object; *code* wins over the object's own `code`."""
    doc = status if isinstance(status, dict) else {}
    if code is None:
        raw_code = doc.get("code")
        code = raw_code if isinstance(raw_code, int) else 500
    reason = str(doc.get("reason") or "") or _phrase(code)
    message = str(doc.get("message") or "")
    # StatusDetails.retryAfterSeconds: how long a 429 or 5xx asks the client to wait
    # (apimachinery's errors.SuggestsClientDelay).
    details = doc.get("details")
    retry = details.get("retryAfterSeconds") if isinstance(details, dict) else None
    retry_after = float(retry) if isinstance(retry, int) and retry > 0 else None
    return ApiError(code, reason, message, method, path, retry_after=retry_after)


def error_from_response(code: int, body: bytes, *, method: str = "", path: str = "") -> ApiError:
    """An ApiError for a non-2xx response; reads the Status body (JSON or protobuf) when
    there is one."""
    if body.startswith(kproto.MAGIC):
        try:
            found = kproto.decode_status(body)
        except kproto.DecodeError:
            found = None
        if found is not None:
            reason = found.reason or _phrase(code)
            return ApiError(code, reason, found.message, method, path)
    try:
        doc = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return error_from_status(doc, code=code, method=method, path=path)
    message = body[:_MAX_QUOTED_BODY].decode(errors="replace")
    return ApiError(code, _phrase(code), message, method, path)
