"""A KubeClient that answers GETs only: for the reads after a write whose answer was lost
(asched.client.readback, the binding cycle's check, DynamicResources' claim check)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio

from asched.testing.fakes import FakeClient


class Reads(FakeClient):
    """Answers each GET with `answer(path)`: a raw object, or an exception to raise. The
    paths asked are kept in `paths`."""

    def __init__(self, answer: Callable[[str], dict[str, Any] | Exception]) -> None:
        super().__init__()
        self.answer = answer
        self.paths: list[str] = []

    @classmethod
    def scripted(cls, *answers: dict[str, Any] | Exception) -> Reads:
        """A server answering the GETs from `answers`, in order."""
        left = list(answers)
        return cls(lambda path: left.pop(0))

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        assert method == "GET"
        await anyio.lowlevel.checkpoint()
        self.paths.append(path)
        answer = self.answer(path)
        if isinstance(answer, Exception):
            raise answer
        return answer
