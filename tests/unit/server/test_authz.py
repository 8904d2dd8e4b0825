"""Authorization: verbs, always-allow paths, privileged groups, SubjectAccessReview, cache."""

from __future__ import annotations

from typing import Any

import pytest

from asched.base.clock import FakeClock
from asched.server.authn import UserInfo
from asched.server.authz import (
    SUBJECT_ACCESS_REVIEWS,
    AllowPathsError,
    Attributes,
    AuthorizationUnavailable,
    PathAllowList,
    SubjectAccessReviewAuthorizer,
    Verdict,
    decode_access_review,
    verb_for,
)
from tests.unit.server.fakes import ReviewServer, access_review

ALICE = UserInfo("alice", "u1", ("dev",), (("scopes", ("a", "b")),))


@pytest.mark.parametrize(
    ("method", "verb"),
    [
        ("GET", "get"),
        ("HEAD", "head"),
        ("POST", "post"),
        ("PUT", "put"),
        ("PATCH", "patch"),
        ("DELETE", "delete"),
        ("OPTIONS", "options"),
    ],
)
def test_non_resource_verb_is_the_lowercased_method(method: str, verb: str) -> None:
    assert verb_for(method) == verb


@pytest.mark.parametrize(
    ("paths", "path", "allowed"),
    [
        pytest.param(("/healthz", "/readyz", "/livez"), "/healthz", True, id="exact"),
        pytest.param(("/healthz",), "/healthz/ping", False, id="exact-is-not-a-prefix"),
        pytest.param(("/healthz",), "/metrics", False, id="other-path"),
        pytest.param(("healthz",), "/healthz", True, id="leading-slash-optional"),
        pytest.param(("/debug/*",), "/debug/pprof", True, id="prefix"),
        pytest.param(("/debug/*",), "/debug/", True, id="prefix-itself"),
        pytest.param(("/debug/*",), "/debugger", False, id="prefix-respects-slash"),
        pytest.param(("/inspector*",), "/inspector/api", True, id="prefix-without-slash"),
        pytest.param(("/",), "/", True, id="root"),
        pytest.param(("/",), "/metrics", False, id="root-is-not-everything"),
        pytest.param(("/*",), "/metrics", True, id="star-is-everything"),
        pytest.param((), "/healthz", False, id="empty-list"),
    ],
)
def test_always_allow_paths(paths: tuple[str, ...], path: str, allowed: bool) -> None:
    assert PathAllowList(paths).allows(path) is allowed


def test_a_star_before_the_end_is_refused_naming_the_flag() -> None:
    with pytest.raises(
        AllowPathsError,
        match=r"--authorization-always-allow-paths: only a trailing \* is allowed in '/a\*/b'",
    ):
        PathAllowList(["/healthz", "/a*/b"])


def _server(answer: dict[str, Any]) -> ReviewServer:
    return ReviewServer({SUBJECT_ACCESS_REVIEWS: lambda _body: answer})


async def test_sends_a_non_resource_subject_access_review() -> None:
    api = _server(access_review(True))
    authz = SubjectAccessReviewAuthorizer(api, FakeClock())

    verdict = await authz.authorize(Attributes(ALICE, "get", "/metrics"))

    assert verdict == Verdict(True)
    assert api.bodies(SUBJECT_ACCESS_REVIEWS) == [
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "alice",
                "uid": "u1",
                "groups": ["dev"],
                "extra": {"scopes": ["a", "b"]},
                "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
            },
        }
    ]


@pytest.mark.parametrize(
    ("allowed", "ttl"),
    [pytest.param(True, 3.0, id="allowed-ttl"), pytest.param(False, 7.0, id="denied-ttl")],
)
async def test_each_answer_is_cached_for_its_own_ttl(allowed: bool, ttl: float) -> None:
    clock = FakeClock()
    api = _server(access_review(allowed, "" if allowed else "no rule"))
    authz = SubjectAccessReviewAuthorizer(api, clock, allowed_ttl=3.0, denied_ttl=7.0)
    attrs = Attributes(ALICE, "get", "/metrics")

    first = await authz.authorize(attrs)
    clock.advance(ttl - 0.01)
    await authz.authorize(attrs)
    assert len(api.calls) == 1
    clock.advance(0.01)
    await authz.authorize(attrs)

    assert first == Verdict(allowed, "" if allowed else "no rule")
    assert len(api.calls) == 2


async def test_cache_key_is_the_whole_request() -> None:
    api = _server(access_review(True))
    authz = SubjectAccessReviewAuthorizer(api, FakeClock())
    for attrs in (
        Attributes(ALICE, "get", "/metrics"),
        Attributes(ALICE, "post", "/metrics"),
        Attributes(ALICE, "get", "/inspector/"),
        Attributes(UserInfo("alice", "u1", ("ops",)), "get", "/metrics"),
        Attributes(ALICE, "get", "/metrics"),
    ):
        await authz.authorize(attrs)
    assert len(api.calls) == 4


async def test_privileged_groups_need_no_review() -> None:
    api = _server(access_review(False))
    authz = SubjectAccessReviewAuthorizer(api, FakeClock())
    root = UserInfo("root", groups=("system:masters",))
    assert await authz.authorize(Attributes(root, "delete", "/anything")) == Verdict(True)
    assert api.calls == []


async def test_an_unreachable_api_server_is_an_error_and_is_not_cached() -> None:
    api = _server(access_review(True))
    api.down = True
    authz = SubjectAccessReviewAuthorizer(api, FakeClock())
    attrs = Attributes(ALICE, "get", "/metrics")

    with pytest.raises(AuthorizationUnavailable, match="connection refused"):
        await authz.authorize(attrs)
    api.down = False
    assert await authz.authorize(attrs) == Verdict(True)
    assert len(api.calls) == 2


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param({}, "has no status", id="no-status"),
        pytest.param({"status": {}}, "allowed is not a boolean", id="no-allowed"),
        pytest.param({"status": {"allowed": "yes"}}, "allowed is not a boolean", id="string"),
    ],
)
def test_unusable_answers_are_errors(doc: Any, message: str) -> None:
    with pytest.raises(AuthorizationUnavailable, match=message):
        decode_access_review(doc)


def test_denied_with_a_reason() -> None:
    doc = {"status": {"allowed": False, "denied": True, "reason": "RBAC: no"}}
    assert decode_access_review(doc) == Verdict(False, "RBAC: no")
