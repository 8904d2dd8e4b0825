"""May this user do this: the always-allow paths, privileged groups, then SubjectAccessReview.

kube-scheduler's authorizer is k8s.io/apiserver's DelegatingAuthorizationOptions
(pkg/server/options/authorization.go toAuthorizer), a union tried in order:
1. privileged groups (`system:masters`) are allowed everything
   (authorizerfactory.NewPrivilegedGroups);
2. `--authorization-always-allow-paths` (pkg/authorization/path.NewAuthorizer): exact paths,
   or prefixes written with one trailing `*`;
3. a SubjectAccessReview (authorization.k8s.io/v1) on the non-resource URL and verb, through
   the webhook authorizer (plugin/pkg/authorizer/webhook), whose answers are cached:
   allowed for AllowCacheTTL, not allowed for DenyCacheTTL (10 s each by default); errors are
   not cached and the request fails closed (filters/authorization.go answers 500).

The path check runs before authentication in asched (asched.server.gate), so probes need no
token; the other two need the authenticated user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from cachetools import TLRUCache

from asched.base.clock import Clock
from asched.client.protocol import REQUEST_ERRORS, KubeClient
from asched.server.authn import CACHE_ENTRIES, UserInfo

SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
DEFAULT_PRIVILEGED_GROUPS = ("system:masters",)
DEFAULT_ALLOWED_TTL = 10.0
DEFAULT_DENIED_TTL = 10.0
DEFAULT_TIMEOUT = 10.0


def verb_for(method: str) -> str:
    """The authorization verb of a request to a non-resource URL.

    k8s.io/apiserver pkg/endpoints/request/requestinfo.go NewRequestInfo starts every
    request as a non-resource one with `Verb: strings.ToLower(req.Method)`; only API
    resource paths (/api, /apis) are mapped further (POST -> create, GET on a collection ->
    list, ...). Everything asched serves is a non-resource URL, so GET -> get, POST ->
    post, HEAD -> head: the verbs a ClusterRole's nonResourceURLs rule must name.
    """
    return method.lower()


class AllowPathsError(ValueError):
    """An --authorization-always-allow-paths entry that cannot be matched."""


class PathAllowList:
    """The paths served to anyone (pkg/authorization/path.NewAuthorizer's matching)."""

    def __init__(self, paths: Sequence[str]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        for raw in paths:
            p = raw.removeprefix("/")
            if not p:
                exact.add(p)  # "/" matches only the root
                continue
            if "*" in p[:-1]:
                raise AllowPathsError(
                    f"--authorization-always-allow-paths: only a trailing * is allowed in {raw!r}"
                )
            if p.endswith("*"):
                prefixes.append(p[:-1])
            else:
                exact.add(p)
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)

    def allows(self, path: str) -> bool:
        p = path.removeprefix("/")
        return p in self._exact or any(p.startswith(prefix) for prefix in self._prefixes)


@dataclass(frozen=True, slots=True)
class Attributes:
    """What is being asked (authorizer.Attributes for a non-resource request)."""

    user: UserInfo
    verb: str
    path: str


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    # Why, when the authorizer said so (the SAR's status.reason); part of the 403 message.
    reason: str = ""


class AuthorizationUnavailable(Exception):
    """The API server gave no usable SubjectAccessReview answer."""


def decode_access_review(doc: Any) -> Verdict:
    """The verdict of an answered SubjectAccessReview (webhook.go Authorize's reading)."""
    status = doc.get("status") if isinstance(doc, dict) else None
    if not isinstance(status, dict):
        raise AuthorizationUnavailable("SubjectAccessReview answer has no status")
    allowed = status.get("allowed")
    if not isinstance(allowed, bool):
        raise AuthorizationUnavailable("SubjectAccessReview status.allowed is not a boolean")
    reason = status.get("reason")
    return Verdict(allowed, reason if isinstance(reason, str) else "")


class SubjectAccessReviewAuthorizer:
    """Attributes -> Verdict: privileged groups, else the API server's SubjectAccessReview."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        allowed_ttl: float = DEFAULT_ALLOWED_TTL,
        denied_ttl: float = DEFAULT_DENIED_TTL,
        timeout: float = DEFAULT_TIMEOUT,
        privileged_groups: Sequence[str] = DEFAULT_PRIVILEGED_GROUPS,
    ) -> None:
        self._client = client
        self._allowed_ttl = allowed_ttl
        self._denied_ttl = denied_ttl
        self._timeout = timeout
        self._privileged = frozenset(privileged_groups)
        # Allowed and denied answers live for their own TTLs (the webhook authorizer's
        # authorizedTTL / unauthorizedTTL); a TTL of 0 or less stores nothing.
        self._cache: TLRUCache[Attributes, Verdict] = TLRUCache(
            maxsize=CACHE_ENTRIES, ttu=self._expiry, timer=clock.now
        )

    async def authorize(self, attrs: Attributes) -> Verdict:
        if self._privileged.intersection(attrs.user.groups):
            return Verdict(True)
        cached = self._cache.get(attrs)
        if cached is not None:
            return cached
        verdict = await self._review(attrs)
        self._cache[attrs] = verdict
        return verdict

    def _expiry(self, _attrs: Attributes, verdict: Verdict, now: float) -> float:
        return now + (self._allowed_ttl if verdict.allowed else self._denied_ttl)

    async def _review(self, attrs: Attributes) -> Verdict:
        user = attrs.user
        spec: dict[str, Any] = {
            "user": user.name,
            "nonResourceAttributes": {"path": attrs.path, "verb": attrs.verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.groups:
            spec["groups"] = list(user.groups)
        if user.extra:
            spec["extra"] = user.extra_dict()
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        try:
            with anyio.fail_after(self._timeout):
                doc = await self._client.request("POST", SUBJECT_ACCESS_REVIEWS, body=body)
        except TimeoutError as exc:
            raise AuthorizationUnavailable(
                f"SubjectAccessReview timed out after {self._timeout}s"
            ) from exc
        except REQUEST_ERRORS as exc:
            raise AuthorizationUnavailable(f"SubjectAccessReview failed: {exc}") from exc
        return decode_access_review(doc)
