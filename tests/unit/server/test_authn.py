"""TokenReviewAuthenticator: the review it sends, its decoding, and its cache."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from asched.base.clock import FakeClock
from asched.server.authn import (
    CACHE_ENTRIES,
    TOKEN_REVIEWS,
    AuthenticationUnavailable,
    TokenReviewAuthenticator,
    UserInfo,
    decode_token_review,
)
from tests.unit.server.fakes import ReviewServer, token_review


def _server(answer: dict[str, Any]) -> ReviewServer:
    return ReviewServer({TOKEN_REVIEWS: lambda _body: answer})


async def test_sends_a_v1_token_review_and_decodes_the_user() -> None:
    api = _server(
        token_review(
            "alice",
            uid="u1",
            groups=("dev", "system:authenticated"),
            extra={"b": ["2", "1"], "a": ["x"]},
        )
    )
    authn = TokenReviewAuthenticator(api, FakeClock())

    user = await authn.authenticate("tok")

    assert user == UserInfo(
        "alice", "u1", ("dev", "system:authenticated"), (("a", ("x",)), ("b", ("2", "1")))
    )
    assert api.bodies(TOKEN_REVIEWS) == [
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": "tok"},
        }
    ]


@pytest.mark.parametrize(
    ("answer", "user"),
    [
        pytest.param(token_review("alice"), UserInfo("alice"), id="authenticated"),
        pytest.param(token_review(None), None, id="rejected"),
    ],
)
async def test_answers_are_cached_for_the_ttl(
    answer: dict[str, Any], user: UserInfo | None
) -> None:
    clock = FakeClock()
    api = _server(answer)
    authn = TokenReviewAuthenticator(api, clock, ttl=10.0)

    first = await authn.authenticate("tok")
    clock.advance(9.9)
    second = await authn.authenticate("tok")
    assert len(api.calls) == 1
    clock.advance(0.1)
    third = await authn.authenticate("tok")

    assert first == second == third == user
    assert len(api.calls) == 2


async def test_tokens_are_cached_apart() -> None:
    api = ReviewServer({TOKEN_REVIEWS: lambda b: token_review(b["spec"]["token"].upper())})
    authn = TokenReviewAuthenticator(api, FakeClock())
    names = [(await authn.authenticate(t)) for t in ("a", "b", "a")]
    assert [u.name if u else None for u in names] == ["A", "B", "A"]
    assert len(api.calls) == 2


async def test_the_cache_is_bounded_and_drops_the_least_recently_used_token() -> None:
    api = _server(token_review("alice"))
    authn = TokenReviewAuthenticator(api, FakeClock())
    for i in range(CACHE_ENTRIES):
        await authn.authenticate(f"t{i}")
    await authn.authenticate("t0")  # t0 is now the most recently used; t1 the least
    await authn.authenticate("flood")
    asked = len(api.calls)

    await authn.authenticate("t0")
    assert len(api.calls) == asked
    await authn.authenticate("t1")
    assert len(api.calls) == asked + 1


async def test_an_unreachable_api_server_is_an_error_and_is_not_cached() -> None:
    api = _server(token_review("alice"))
    api.down = True
    authn = TokenReviewAuthenticator(api, FakeClock())

    with pytest.raises(
        AuthenticationUnavailable, match=r"TokenReview failed: .*connection refused"
    ):
        await authn.authenticate("tok")
    api.down = False
    assert await authn.authenticate("tok") == UserInfo("alice")
    assert len(api.calls) == 2


async def test_ttl_zero_asks_every_time() -> None:
    api = _server(token_review("alice"))
    authn = TokenReviewAuthenticator(api, FakeClock(), ttl=0)
    for _ in range(3):
        await authn.authenticate("tok")
    assert len(api.calls) == 3


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param({}, "has no status", id="no-status"),
        pytest.param([], "has no status", id="not-an-object"),
        pytest.param(
            {"status": {"authenticated": False, "error": "webhook down"}},
            "status.error: webhook down",
            id="status-error",
        ),
        pytest.param({"status": {"authenticated": True}}, "username is missing", id="no-user"),
        pytest.param(
            {"status": {"authenticated": True, "user": {"username": "a", "groups": "g"}}},
            "groups is not a list of strings",
            id="groups-not-list",
        ),
        pytest.param(
            {"status": {"authenticated": True, "user": {"username": "a", "extra": {"k": "v"}}}},
            "extra is not a map of lists",
            id="extra-not-lists",
        ),
    ],
)
def test_unusable_answers_are_errors(doc: Any, message: str) -> None:
    with pytest.raises(AuthenticationUnavailable, match=message):
        decode_token_review(doc)


class _Held:
    """A review endpoint that answers only when the test releases it."""

    def __init__(self, answer: dict[str, Any] | None) -> None:
        self.release = anyio.Event()
        self.calls = 0
        self.answer = answer

    async def request(self, method: str, path: str, **_kw: Any) -> Any:
        self.calls += 1
        await self.release.wait()
        if self.answer is None:
            raise ConnectionRefusedError("connection refused")
        return self.answer


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        pytest.param(token_review("alice"), UserInfo("alice"), id="answer-shared"),
        pytest.param(None, "unavailable", id="failure-shared"),
    ],
)
async def test_concurrent_requests_with_one_token_share_one_review(
    answer: dict[str, Any] | None, outcome: UserInfo | str
) -> None:
    api = _Held(answer)
    authn = TokenReviewAuthenticator(api, FakeClock())  # type: ignore[arg-type]
    results: list[UserInfo | str | None] = []

    async def one() -> None:
        try:
            results.append(await authn.authenticate("tok"))
        except AuthenticationUnavailable:
            results.append("unavailable")

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
        await anyio.wait_all_tasks_blocked()
        api.release.set()

    assert api.calls == 1
    assert results == [outcome] * 5


async def test_a_cancelled_review_lets_the_next_request_ask_again() -> None:
    api = _Held(token_review("alice"))
    authn = TokenReviewAuthenticator(api, FakeClock())  # type: ignore[arg-type]
    with anyio.move_on_after(0) as scope:
        await authn.authenticate("tok")
    assert scope.cancelled_caught
    api.release.set()
    assert await authn.authenticate("tok") == UserInfo("alice")
    assert api.calls == 2
