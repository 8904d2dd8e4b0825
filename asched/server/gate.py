"""The admission decision of every request to the ops port, independent of the web framework.

kube-scheduler's handler chain (k8s.io/apiserver pkg/server/config.go
DefaultBuildHandlerChain: WithAuthorization inside WithAuthentication) answers:
- 401 with a Status "Unauthorized" when no credential authenticates (filters/authentication.go
  unauthorized handler); asched also answers 401 when the TokenReview could not be made, as
  the apiserver does (its authenticator error is a failed authentication);
- 403 with the Status message `forbidden: User "<name>" cannot <verb> path "<path>"`
  (responsewriters.ForbiddenStatusError), plus `: <reason>` when the SAR gave one;
- 500 `Internal Server Error` when the authorizer failed (filters/authorization.go), so an
  unreachable API server never lets a request through: fail closed.

One deliberate difference: kube-scheduler authenticates anonymous users and lets the path
authorizer allow them, and asks the API server about everyone else; asched checks
`--authorization-always-allow-paths` first and serves those paths without looking at
credentials (probes carry none), and refuses a request without a token with 401 rather
than asking whether `system:anonymous` may have it (there is no anonymous access).

Every route of the ops server passes through one Gate, so a route added later (the
inspector's /inspector/...) is protected the same way, with the same verbs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import orjson
import structlog

from asched.server.authn import AuthenticationUnavailable, TokenReviewAuthenticator, UserInfo
from asched.server.authz import (
    Attributes,
    AuthorizationUnavailable,
    PathAllowList,
    SubjectAccessReviewAuthorizer,
    verb_for,
)

log = structlog.get_logger(__name__)

STATUS_CONTENT_TYPE = "application/json"


@dataclass(frozen=True, slots=True)
class Refusal:
    """The answer to a request that may not be served."""

    status: int
    body: bytes
    content_type: str = STATUS_CONTENT_TYPE


class Gate(Protocol):
    async def admit(
        self,
        method: str,
        path: str,
        authorization: str | None,
        client_user: UserInfo | None = None,
    ) -> Refusal | None:
        """None to serve the request; otherwise the answer to send instead.

        *client_user*: the user of the TLS client certificate, when one was presented and
        verified against --client-ca-file (asched.server.authn.user_from_client_certificate).
        """
        ...


class OpenGate:
    """Serves everyone: only for `--insecure-serving`, which binds loopback only."""

    async def admit(
        self,
        method: str,
        path: str,
        authorization: str | None,
        client_user: UserInfo | None = None,
    ) -> Refusal | None:
        return None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header
    (pkg/authentication/request/bearertoken: the scheme is case-insensitive)."""
    if authorization is None:
        return None
    parts = authorization.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def _status(code: int, reason: str, message: str) -> bytes:
    return orjson.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
    )


UNAUTHORIZED = Refusal(401, _status(401, "Unauthorized", "Unauthorized"))


def forbidden(attrs: Attributes, reason: str) -> Refusal:
    message = f"forbidden: User {_go_quote(attrs.user.name)} cannot {attrs.verb} path "
    message += _go_quote(attrs.path)
    if reason:
        message += f": {reason}"
    return Refusal(403, _status(403, "Forbidden", message))


def _go_quote(s: str) -> str:
    # Go's %q for the plain names and paths seen here: double quotes, escaped quote/backslash.
    return orjson.dumps(s).decode()


class DelegatedGate:
    """Authentication and authorization delegated to the API server."""

    def __init__(
        self,
        allow_paths: PathAllowList,
        authenticator: TokenReviewAuthenticator,
        authorizer: SubjectAccessReviewAuthorizer,
    ) -> None:
        self._allow_paths = allow_paths
        self._authenticator = authenticator
        self._authorizer = authorizer

    async def admit(
        self,
        method: str,
        path: str,
        authorization: str | None,
        client_user: UserInfo | None = None,
    ) -> Refusal | None:
        if self._allow_paths.allows(path):
            return None
        # The apiserver's union authenticator tries the client certificate before tokens.
        user = client_user
        if user is None:
            token = bearer_token(authorization)
            if token is None:
                return UNAUTHORIZED
            try:
                user = await self._authenticator.authenticate(token)
            except AuthenticationUnavailable as exc:
                log.warning("authentication_unavailable", path=path, error=str(exc))
                return UNAUTHORIZED
            if user is None:
                return UNAUTHORIZED
        attrs = Attributes(user, verb_for(method), path)
        try:
            verdict = await self._authorizer.authorize(attrs)
        except AuthorizationUnavailable as exc:
            log.warning("authorization_unavailable", user=user.name, path=path, error=str(exc))
            text = f"Internal Server Error: {_go_quote(path)}: {exc}\n"
            return Refusal(500, text.encode(), "text/plain; charset=utf-8")
        if verdict.allowed:
            return None
        return forbidden(attrs, verdict.reason)
