"""An extender answered by a Python function instead of over HTTP, for unit tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from asched.config import ExtenderConfig
from asched.extender import ExtenderError, HTTPExtender, WireObjects

# verb, the decoded request -> the answer (encoded as JSON), or an ExtenderError to raise.
Answer = Callable[[str, Any], Any]


class FakePoster:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, Any]] = []
        self.closed = False

    async def post(self, verb: str, body: bytes) -> bytes:
        request = orjson.loads(body)
        self.calls.append((verb, request))
        out = self.answer(verb, request)
        if isinstance(out, ExtenderError):
            raise out
        return orjson.dumps(out)

    async def close(self) -> None:
        self.closed = True


def fake_extender(
    answer: Answer, objects: WireObjects | None = None, **config: Any
) -> tuple[HTTPExtender, FakePoster]:
    config.setdefault("url_prefix", "http://ext")
    poster = FakePoster(answer)
    return HTTPExtender(ExtenderConfig(**config), poster, objects or WireObjects()), poster


def keep_only(*names: str) -> Answer:
    """A filter extender (nodeCacheCapable) keeping *names*, failing the rest."""

    def answer(verb: str, request: Any) -> Any:
        sent = request["NodeNames"]
        return {
            "NodeNames": [n for n in sent if n in names],
            "FailedNodes": {n: "not mine" for n in sent if n not in names},
        }

    return answer
