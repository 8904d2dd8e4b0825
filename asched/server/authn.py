"""Who is asking: client certificates, and bearer tokens checked by the API server.

kube-scheduler does not know its callers; it asks the API server
(authentication.k8s.io/v1 TokenReview) and caches the answer, which is what
k8s.io/apiserver's DelegatingAuthenticatorConfig.New builds: webhook token authenticator
(plugin/pkg/authenticator/token/webhook) behind cache.New(tokenAuth, cacheErrs=false,
CacheTTL, CacheTTL). So here:

- a token the API server accepts or rejects is cached for `ttl` seconds (both answers, as
  the apiserver caches success and failure with the same TTL); the key is the token's
  SHA-256, so the cache holds no usable credential;
- concurrent requests with the same uncached token share one TokenReview (the
  apiserver's cached authenticator does the same with singleflight), so a page that
  loads many resources at once costs one review;
- an answer that could not be had (API server unreachable, a 5xx, a 403 because asched
  lacks `create tokenreviews`, a malformed body) raises AuthenticationUnavailable and is
  not cached (cacheErrs=false): the caller fails closed with 401, and the next request
  asks again.

The TokenReview answer is decoded here, once, into a UserInfo; nothing past this module
sees its JSON.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import anyio
from cachetools import TLRUCache

from asched.base.clock import Clock
from asched.client.protocol import REQUEST_ERRORS, KubeClient

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
# k8s.io/apiserver pkg/server/options/authentication.go: CacheTTL 10s,
# TokenAccessReviewTimeout 10s.
DEFAULT_TTL = 10.0
# Entries in each answer cache: a flood of requests with random tokens costs no more.
CACHE_ENTRIES = 4096
DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class UserInfo:
    """The user the API server says a credential belongs to (user.Info)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    # Sorted (key, values) pairs: hashable, so a UserInfo can key the authorization cache.
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def extra_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.extra}


class AuthenticationUnavailable(Exception):
    """The API server gave no usable TokenReview answer; the request cannot be authenticated."""


def decode_token_review(doc: Any) -> UserInfo | None:
    """The user of an answered TokenReview; None when the token was not authenticated.

    Raises AuthenticationUnavailable for a body that is not a TokenReview status, and for
    a status carrying an `error` (the webhook authenticator returns that as an error, which
    is neither a yes nor a cacheable no).
    """
    status = doc.get("status") if isinstance(doc, dict) else None
    if not isinstance(status, dict):
        raise AuthenticationUnavailable("TokenReview answer has no status")
    if status.get("authenticated") is not True:
        error = status.get("error")
        if isinstance(error, str) and error:
            raise AuthenticationUnavailable(f"TokenReview status.error: {error}")
        return None
    user = status.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("username"), str):
        raise AuthenticationUnavailable("TokenReview status.user.username is missing")
    groups = user.get("groups") or []
    extra = user.get("extra") or {}
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise AuthenticationUnavailable("TokenReview status.user.groups is not a list of strings")
    if not isinstance(extra, dict) or not all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in extra.values()
    ):
        raise AuthenticationUnavailable("TokenReview status.user.extra is not a map of lists")
    uid = user.get("uid")
    return UserInfo(
        name=user["username"],
        uid=uid if isinstance(uid, str) else "",
        groups=tuple(groups),
        extra=tuple(sorted((str(k), tuple(v)) for k, v in extra.items())),
    )


AUTHENTICATED_GROUP = "system:authenticated"

# The RDN keys Python's ssl uses in getpeercert()'s subject.
_COMMON_NAME = "commonName"
_ORGANIZATION = "organizationName"


def user_from_client_certificate(peercert: Any) -> UserInfo | None:
    """The user of a verified client certificate, from ssl's getpeercert() dict.

    k8s.io/apiserver pkg/authentication/request/x509 CommonNameUserConversion: the user is
    the subject's CommonName, the groups its Organizations; a certificate without a
    CommonName authenticates nobody. group.NewAuthenticatedGroupAdder adds
    system:authenticated, as the API server does for tokens it reviews.
    """
    if not isinstance(peercert, dict):
        return None
    common_names: list[str] = []
    organizations: list[str] = []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == _COMMON_NAME:
                common_names.append(value)
            elif key == _ORGANIZATION:
                organizations.append(value)
    # Go's pkix.Name keeps the last CommonName it reads; so does this.
    if not common_names or not common_names[-1]:
        return None
    groups = tuple(dict.fromkeys([*organizations, AUTHENTICATED_GROUP]))
    return UserInfo(name=common_names[-1], groups=groups)


@dataclass(slots=True)
class _Flight:
    """One TokenReview in progress; requests with the same token wait for its end."""

    done: anyio.Event = field(default_factory=anyio.Event)
    user: UserInfo | None = None
    error: str = ""


class TokenReviewAuthenticator:
    """Bearer token -> UserInfo through the API server, with a TTL cache."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        ttl: float = DEFAULT_TTL,
        timeout: float = DEFAULT_TIMEOUT,
        audiences: tuple[str, ...] = (),
    ) -> None:
        self._client = client
        self._ttl = ttl
        self._timeout = timeout
        self._audiences = audiences
        # Cached answers: a UserInfo, or False for "the API server said no". A TTL of 0 or
        # less stores nothing (the apiserver's "0 disables the cache"); full, the least
        # recently used entry goes, so random tokens cost at most CACHE_ENTRIES entries.
        self._cache: TLRUCache[bytes, UserInfo | bool] = TLRUCache(
            maxsize=CACHE_ENTRIES, ttu=lambda _key, _value, now: now + ttl, timer=clock.now
        )
        self._inflight: dict[bytes, _Flight] = {}

    async def authenticate(self, token: str) -> UserInfo | None:
        """The token's user; None when the API server rejects it. Raises
        AuthenticationUnavailable when no answer could be had."""
        key = hashlib.sha256(token.encode()).digest()
        cached = self._cache.get(key)
        if cached is not None:
            return cached if isinstance(cached, UserInfo) else None
        flight = self._inflight.get(key)
        if flight is not None:
            await flight.done.wait()
            if flight.error:
                raise AuthenticationUnavailable(flight.error)
            return flight.user
        flight = self._inflight[key] = _Flight()
        try:
            user = await self._review(token)
            flight.user = user
            self._cache[key] = user if user is not None else False
        except AuthenticationUnavailable as exc:
            flight.error = str(exc)
            raise
        except BaseException:
            # Cancelled (the caller went away): the waiters ask again next time.
            flight.error = "the TokenReview was abandoned by the request that made it"
            raise
        finally:
            del self._inflight[key]
            flight.done.set()
        return user

    async def _review(self, token: str) -> UserInfo | None:
        spec: dict[str, Any] = {"token": token}
        if self._audiences:
            spec["audiences"] = list(self._audiences)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        try:
            with anyio.fail_after(self._timeout):
                doc = await self._client.request("POST", TOKEN_REVIEWS, body=body)
        except TimeoutError as exc:
            why = f"TokenReview timed out after {self._timeout}s"
            raise AuthenticationUnavailable(why) from exc
        except REQUEST_ERRORS as exc:
            raise AuthenticationUnavailable(f"TokenReview failed: {exc}") from exc
        return decode_token_review(doc)
