"""list_pages: continue tokens, and starting over when a token expires."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from asched.client.pager import ListPage, list_pages
from asched.client.protocol import ApiError

EXPIRED = ApiError(410, "Expired", "The provided continue parameter is too old")


class ScriptedLists:
    """A KubeClient whose GETs return scripted answers in order and record their params."""

    def __init__(self, answers: list[dict[str, Any] | ApiError]) -> None:
        self.answers = answers
        self.params: list[dict[str, str]] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        self.params.append(dict(params or {}))
        answer = self.answers.pop(0)
        if isinstance(answer, ApiError):
            raise answer
        return answer

    def stream_lines(
        self, path: str, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        pass


def page(names: list[str], rv: str, cont: str = "") -> dict[str, Any]:
    meta = {"resourceVersion": rv, **({"continue": cont} if cont else {})}
    return {"metadata": meta, "items": [{"metadata": {"name": n}} for n in names]}


def names(p: ListPage) -> list[str]:
    return [i["metadata"]["name"] for i in p.items]


async def collect(client: ScriptedLists) -> list[ListPage]:
    return [p async for p in list_pages(client, "/api/v1/pods", {"labelSelector": "a=b"}, limit=2)]


async def test_follows_continue_tokens() -> None:
    client = ScriptedLists(
        [page(["a", "b"], "10", "t1"), page(["c", "d"], "10", "t2"), page(["e"], "10")]
    )

    pages = await collect(client)

    assert [names(p) for p in pages] == [["a", "b"], ["c", "d"], ["e"]]
    assert {p.resource_version for p in pages} == {"10"}
    assert not any(p.restarted for p in pages)
    assert [q.get("continue") for q in client.params] == [None, "t1", "t2"]
    assert all(q["limit"] == "2" and q["labelSelector"] == "a=b" for q in client.params)


async def test_expired_continue_starts_over_and_says_so() -> None:
    client = ScriptedLists(
        [page(["a", "b"], "10", "t1"), EXPIRED, page(["a", "c"], "20", "u1"), page(["d"], "20")]
    )

    pages = await collect(client)

    assert [(names(p), p.restarted) for p in pages] == [
        (["a", "b"], False),
        (["a", "c"], True),
        (["d"], False),
    ]
    assert "continue" not in client.params[2]


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(EXPIRED, id="410-on-first-page-is-not-a-continue-problem"),
        pytest.param(ApiError(403, "Forbidden", "no"), id="403"),
    ],
)
async def test_other_errors_raise(error: ApiError) -> None:
    client = ScriptedLists([error])

    with pytest.raises(ApiError) as raised:
        await collect(client)
    assert raised.value is error
